package dev.outboxreplay.server.internal;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
import dev.outboxreplay.server.TenantResolver;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routing and header checks: {@code POST /{operation}} to its handler through the
 * {@link RequestProcessor}, {@code GET} {@value HttpContract#RECONCILE_PATH} to reconciliation;
 * the method, tenant, Idempotency-Key, body size and Content-Digest are checked first and a
 * failed check is answered here with a fixed message. Thread-safe.
 */
public final class RequestRouter {
  private static final Logger LOG = LoggerFactory.getLogger(RequestRouter.class);

  private final Map<String, OperationHandler> handlers;
  private final TenantResolver tenants;
  private final RequestProcessor processor;
  private final IdempotencyProtocol protocol;
  private final int maxBodyBytes;

  public RequestRouter(Map<String, OperationHandler> handlers, TenantResolver tenants,
      RequestProcessor processor, IdempotencyProtocol protocol, int maxBodyBytes) {
    this.handlers = Map.copyOf(handlers);
    this.tenants = tenants;
    this.processor = processor;
    this.protocol = protocol;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** The answer to {@code request}; a failure inside is answered 500 and logged by class. */
  public Answer route(Incoming request) {
    try {
      if (request.path().equals(HttpContract.RECONCILE_PATH)) {
        return reconcile(request);
      }
      return process(request);
    } catch (SQLException | RuntimeException e) {
      // the class and frame only: a message may quote the request
      LOG.error("request failed: {}", IdempotencyProtocol.withoutMessage(e));
      return Answer.problem(500, "Internal Server Error",
          "the request failed inside the receiver; retry with the same key");
    }
  }

  private Answer process(Incoming request) throws SQLException {
    String path = request.path();
    String operation = path.length() > 1 ? path.substring(1) : "";
    OperationHandler handler = handlers.get(operation);
    if (handler == null) {
      return Answer.problem(404, "Not Found", "no such operation");
    }
    if (!request.method().equals("POST")) {
      return Answer.problem(405, "about:blank", "Method Not Allowed", "operations take POST",
          Map.of("Allow", "POST"));
    }
    Checked checked = check(request);
    if (checked.refusal != null) {
      return checked.refusal;
    }
    byte[] body = request.body();
    if (body == null) {
      return Answer.problem(413, "Content Too Large",
          "the body is over the limit of " + maxBodyBytes + " bytes");
    }
    String digest = request.header().apply(HttpContract.CONTENT_DIGEST);
    if (digest != null && !digest.strip().equals(HttpContract.contentDigest(body))) {
      return Answer.problem(400, "Bad Request", "Content-Digest does not match the body");
    }
    return processor.process(new ServerRequest(checked.tenant, operation, checked.key,
        request.header().apply(HttpContract.COMMAND_ID),
        request.header().apply(HttpContract.SESSION_VERSION), body), handler);
  }

  private Answer reconcile(Incoming request) throws SQLException {
    if (!request.method().equals("GET")) {
      return Answer.problem(405, "about:blank", "Method Not Allowed",
          "reconciliation takes GET", Map.of("Allow", "GET"));
    }
    Checked checked = check(request);
    return checked.refusal != null ? checked.refusal
        : protocol.reconcile(checked.tenant, checked.key);
  }

  /** A request's tenant and key, or the answer refusing it. */
  private record Checked(String tenant, String key, Answer refusal) {
    static Checked refused(Answer refusal) {
      return new Checked(null, null, refusal);
    }
  }

  /**
   * The request's tenant (from the {@link TenantResolver}) and parsed Idempotency-Key, or a
   * refusal: 400 (malformed tenant header or key), 401 (no or unknown credentials) or 403 (a
   * tenant header naming another tenant than the credentials).
   */
  private Checked check(Incoming request) {
    String declared = request.header().apply(HttpContract.TENANT);
    if (declared != null && !validTenant(declared)) {
      return Checked.refused(Answer.problem(400, "Bad Request",
          HttpContract.TENANT + " must be 1-100 visible ASCII characters"));
    }
    Optional<String> tenant = tenants.tenantOf(request.header()::apply);
    if (tenant.isEmpty()) {
      return Checked.refused(Answer.problem(401, "about:blank", "Unauthorized",
          "credentials are missing or not known", Map.of("WWW-Authenticate", "Bearer")));
    }
    if (!validTenant(tenant.get())) {
      throw new IllegalStateException("the TenantResolver returned a malformed tenant");
    }
    if (declared != null && !declared.equals(tenant.get())) {
      return Checked.refused(Answer.problem(403, "Forbidden",
          HttpContract.TENANT + " names another tenant than the credentials"));
    }
    String header = request.header().apply(HttpContract.IDEMPOTENCY_KEY);
    if (header == null) {
      return Checked.refused(Answer.problem(400, "Bad Request",
          "the Idempotency-Key header is required"));
    }
    try {
      return new Checked(tenant.get(),
          new IdempotencyKey(HttpContract.parseStructuredString(header)).value(), null);
    } catch (IllegalArgumentException e) {
      return Checked.refused(Answer.problem(400, "Bad Request", "malformed Idempotency-Key: "
          + "it must be an RFC 8941 string (in double quotes) of 1-255 visible ASCII characters"));
    }
  }

  private static boolean validTenant(String tenant) {
    return !tenant.isBlank() && tenant.length() <= 100
        && tenant.chars().allMatch(c -> c > 0x20 && c < 0x7f);
  }
}
