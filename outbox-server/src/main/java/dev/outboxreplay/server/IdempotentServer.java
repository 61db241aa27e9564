package dev.outboxreplay.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.internal.Arguments;
import dev.outboxreplay.server.internal.Exchanges;
import dev.outboxreplay.server.internal.IdempotencyRecords;
import dev.outboxreplay.server.internal.IdempotencyRecords.Record;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reference idempotent receiver following the IETF Idempotency-Key draft, over the JDK
 * {@link HttpServer} and an H2 idempotency table. Routes: {@code POST /{operation}} to the
 * registered {@link OperationHandler}, and the reconciliation endpoint described in
 * {@link HttpContract}.
 *
 * <ul>
 *   <li>First request with a key: processed; the handler's effect and the stored answer commit
 *       in one transaction.
 *   <li>Repeat after completion, same payload: the stored answer, byte for byte, with
 *       {@code Idempotent-Replayed: true}; the handler does not run.
 *   <li>Same key, different payload: 422. Same key while the first is processed: 409 with
 *       problem type {@value Exchanges#IN_PROGRESS_TYPE}. Missing or malformed key: 400. Body
 *       over the limit: 413. Unknown route: 404. Nothing is stored for these.
 *   <li>Keys are scoped by the {@code Outbox-Tenant} header and kept for the retention period
 *       (default 7 days) after their first use, then pruned in the background in small batches.
 * </ul>
 *
 * <p>The server owns its database file: at start it forgets requests left {@code started} by a
 * previous process (their effects never committed), so their retries are processed afresh.
 * It listens on the loopback address only. Thread-safe.
 */
public final class IdempotentServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(IdempotentServer.class);
  /** Default retention of a key after its first use. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  /** Default largest request body: 1 MiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;

  private final H2Database database;
  private final IdempotencyRecords records;
  private final Map<String, OperationHandler> handlers;
  private final Clock clock;
  private final Duration retention;
  private final int maxBodyBytes;
  private final FaultPlan faults;
  private final TenantResolver tenants;
  private final HttpServer http;
  private final ExecutorService workers;
  private final ScheduledExecutorService pruner;

  private IdempotentServer(Builder b) throws IOException {
    this.database = b.database;
    this.handlers = Map.copyOf(b.handlers);
    this.clock = b.clock;
    this.retention = b.retention;
    this.maxBodyBytes = b.maxBodyBytes;
    this.faults = b.faults;
    this.tenants = b.tenants;
    database.migrate(IdempotencyRecords.COMPONENT, IdempotencyRecords.MIGRATIONS);
    this.records = new IdempotencyRecords(database);
    try {
      int cleared = records.clearStarted();
      if (cleared > 0) {
        LOG.info("forgot {} request(s) left started by a previous process", cleared);
      }
    } catch (SQLException e) {
      throw new IOException("cannot clear started idempotency records", e);
    }
    // The JDK server reads this once, when its classes load: without it every small
    // request/response on loopback waits ~40 ms for delayed ACKs.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    this.http = HttpServer.create(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), b.port), 128);
    this.workers = Executors.newFixedThreadPool(b.threads, r -> {
      Thread t = new Thread(r, "idempotent-server");
      t.setDaemon(true);
      return t;
    });
    http.setExecutor(workers);
    http.createContext("/", this::handle);
    this.pruner = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "idempotency-pruner");
      t.setDaemon(true);
      return t;
    });
    pruner.scheduleWithFixedDelay(this::pruneQuietly, b.pruneInterval.toMillis(),
        b.pruneInterval.toMillis(), TimeUnit.MILLISECONDS);
    http.start();
  }

  /** A builder; {@link Builder#database(H2Database)} and at least one handler are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The port it listens on (useful with port 0). */
  public int port() {
    return http.getAddress().getPort();
  }

  /** {@code http://127.0.0.1:{port}}. */
  public String baseUrl() {
    return "http://" + http.getAddress().getAddress().getHostAddress() + ":" + port();
  }

  /** Deletes expired records now, in batches, without holding locks between batches. */
  public int pruneExpired() throws SQLException {
    int total = 0;
    int deleted;
    do {
      deleted = records.pruneExpired(clock.instant(), 1_000);
      total += deleted;
    } while (deleted == 1_000);
    return total;
  }

  /** Number of idempotency records stored (all tenants). */
  public long recordCount() throws SQLException {
    return records.count();
  }

  /** Stops listening (in-flight requests get up to a second) and stops pruning. */
  @Override
  public void close() {
    http.stop(1);
    pruner.shutdownNow();
    workers.shutdownNow();
  }

  private void pruneQuietly() {
    try {
      int pruned = pruneExpired();
      if (pruned > 0) {
        LOG.debug("pruned {} expired idempotency record(s)", pruned);
      }
    } catch (SQLException | RuntimeException e) {
      LOG.warn("pruning expired idempotency records failed; retried at the next interval", e);
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    try {
      String path = exchange.getRequestURI().getPath();
      if (path.equals(HttpContract.RECONCILE_PATH)) {
        reconcile(exchange);
      } else {
        process(exchange, path);
      }
    } catch (SQLException | RuntimeException e) {
      LOG.error("request failed: {}", withoutMessage(e)); // a message may quote the request
      Exchanges.problem(exchange, 500, "Internal Server Error",
          "the request failed inside the receiver; retry with the same key");
    }
  }

  private void process(HttpExchange exchange, String path) throws IOException, SQLException {
    String operation = path.length() > 1 ? path.substring(1) : "";
    OperationHandler handler = handlers.get(operation);
    if (handler == null) {
      Exchanges.problem(exchange, 404, "Not Found", "no such operation");
      return;
    }
    if (!exchange.getRequestMethod().equals("POST")) {
      exchange.getResponseHeaders().set("Allow", "POST");
      Exchanges.problem(exchange, 405, "Method Not Allowed", "operations take POST");
      return;
    }
    String tenant = tenantOf(exchange);
    String key = tenant == null ? null : keyOf(exchange);
    if (key == null) {
      return; // answered
    }
    byte[] body = Exchanges.readBody(exchange, maxBodyBytes);
    if (body == null) {
      Exchanges.problem(exchange, 413, "Content Too Large",
          "the body is over the limit of " + maxBodyBytes + " bytes");
      return;
    }
    String digest = exchange.getRequestHeaders().getFirst(HttpContract.CONTENT_DIGEST);
    if (digest != null && !digest.strip().equals(HttpContract.contentDigest(body))) {
      Exchanges.problem(exchange, 400, "Bad Request", "Content-Digest does not match the body");
      return;
    }
    ServerRequest request = new ServerRequest(tenant, operation, key,
        exchange.getRequestHeaders().getFirst(HttpContract.COMMAND_ID),
        exchange.getRequestHeaders().getFirst(HttpContract.SESSION_VERSION), body);
    FaultPlan.Fault fault = faults.onRequest(request);
    if (fault.failStatus() != 0) {
      Map<String, String> headers = fault.retryAfter() == null ? Map.of()
          : Map.of("Retry-After", Long.toString(fault.retryAfter().toSeconds()));
      Exchanges.problem(exchange, fault.failStatus(), "about:blank", "Injected failure",
          "fault plan answered " + fault.failStatus(), headers);
      return;
    }
    byte[] hash = sha256(body);
    Instant now = clock.instant();
    Optional<Record> existing = records.start(tenant, key, operation, hash, now,
        now.plus(retention));
    if (existing.isPresent()) {
      answerExisting(exchange, existing.get(), hash);
      return;
    }
    HandlerResponse response;
    try (Connection tx = database.dataSource().getConnection()) {
      tx.setAutoCommit(false);
      try {
        response = handler.handle(tx, request);
        if (fault.beforeCommit() != null) {
          fault.beforeCommit().run();
        }
        records.commit(tx, tenant, key, response.status(), response.contentType(),
            response.body(), clock.instant());
        tx.commit();
        database.afterCommit(tx);
      } catch (Exception e) {
        tx.rollback();
        // Stored, answered by reconciliation and logged: the class only. An exception's message
        // may quote the request body (a parser's error does), which is the client's data.
        records.fail(tenant, key, "handler_failed:" + e.getClass().getSimpleName(),
            clock.instant());
        LOG.warn("handler for {} failed; nothing committed, the key may be retried: {}",
            operation, withoutMessage(e));
        Exchanges.problem(exchange, 500, "Internal Server Error",
            "the operation failed and took no effect; retry with the same key");
        return;
      }
    }
    if (fault.afterCommit() != null) {
      fault.afterCommit().run();
    }
    if (fault.dropResponse()) {
      exchange.close(); // no headers sent: the JDK server closes the connection
      return;
    }
    Exchanges.send(exchange, response.status(), response.contentType(), response.body(),
        Map.of(HttpContract.REPLAYED, "false"));
  }

  private void answerExisting(HttpExchange exchange, Record existing, byte[] hash)
      throws IOException {
    if (!existing.samePayload(hash)) {
      Exchanges.problem(exchange, 422, "Unprocessable Content",
          "this Idempotency-Key was used with a different payload");
    } else if (existing.state() == IdempotencyRecords.State.COMMITTED) {
      Exchanges.send(exchange, existing.responseStatus(), existing.contentType(),
          existing.responseBody() == null ? new byte[0] : existing.responseBody(),
          Map.of(HttpContract.REPLAYED, "true"));
    } else {
      Exchanges.problem(exchange, 409, Exchanges.IN_PROGRESS_TYPE, "Conflict",
          "a request with this Idempotency-Key is being processed; retry later", Map.of());
    }
  }

  private void reconcile(HttpExchange exchange) throws IOException, SQLException {
    if (!exchange.getRequestMethod().equals("GET")) {
      exchange.getResponseHeaders().set("Allow", "GET");
      Exchanges.problem(exchange, 405, "Method Not Allowed", "reconciliation takes GET");
      return;
    }
    String tenant = tenantOf(exchange);
    String key = tenant == null ? null : keyOf(exchange);
    if (key == null) {
      return; // answered
    }
    Optional<Record> found = records.find(tenant, key);
    ObjectNode answer = Exchanges.JSON.createObjectNode();
    if (found.isEmpty()) {
      answer.put("status", "not_seen");
    } else {
      Record r = found.get();
      switch (r.state()) {
        case COMMITTED -> {
          answer.put("status", r.state().stored());
          answer.putObject("response").put("status", r.responseStatus())
              .put("contentType", r.contentType())
              .put("bodyBase64", Base64.getEncoder().encodeToString(
                  r.responseBody() == null ? new byte[0] : r.responseBody()));
        }
        case FAILED -> answer.put("status", r.state().stored()).put("error", r.error());
        case STARTED -> answer.put("status", "processing");
      }
    }
    Exchanges.send(exchange, 200, "application/json", Exchanges.JSON.writeValueAsBytes(answer),
        Map.of());
  }

  /**
   * An exception for the log without its message, which may quote request bytes: its class and
   * where it was thrown, for each cause.
   */
  static String withoutMessage(Throwable e) {
    StringBuilder out = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (out.length() > 0) {
        out.append(" <- caused by ");
      }
      out.append(t.getClass().getName());
      StackTraceElement[] frames = t.getStackTrace();
      if (frames.length > 0) {
        out.append(" at ").append(frames[0]);
      }
    }
    return out.toString();
  }

  /**
   * The request's tenant: from the {@link TenantResolver}; null after answering 400 (malformed
   * tenant header), 401 (no or unknown credentials) or 403 (a tenant header naming another
   * tenant than the credentials).
   */
  private String tenantOf(HttpExchange exchange) throws IOException {
    String declared = exchange.getRequestHeaders().getFirst(HttpContract.TENANT);
    if (declared != null && !validTenant(declared)) {
      Exchanges.problem(exchange, 400, "Bad Request",
          HttpContract.TENANT + " must be 1-100 visible ASCII characters");
      return null;
    }
    Optional<String> tenant = tenants.tenantOf(exchange.getRequestHeaders()::getFirst);
    if (tenant.isEmpty()) {
      exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
      Exchanges.problem(exchange, 401, "Unauthorized", "credentials are missing or not known");
      return null;
    }
    if (!validTenant(tenant.get())) {
      throw new IllegalStateException("the TenantResolver returned a malformed tenant");
    }
    if (declared != null && !declared.equals(tenant.get())) {
      Exchanges.problem(exchange, 403, "Forbidden",
          HttpContract.TENANT + " names another tenant than the credentials");
      return null;
    }
    return tenant.get();
  }

  private static boolean validTenant(String tenant) {
    return !tenant.isBlank() && tenant.length() <= 100
        && tenant.chars().allMatch(c -> c > 0x20 && c < 0x7f);
  }

  /** The parsed Idempotency-Key; null after answering 400. */
  private static String keyOf(HttpExchange exchange) throws IOException {
    String header = exchange.getRequestHeaders().getFirst(HttpContract.IDEMPOTENCY_KEY);
    if (header == null) {
      Exchanges.problem(exchange, 400, "Bad Request", "the Idempotency-Key header is required");
      return null;
    }
    try {
      return new IdempotencyKey(HttpContract.parseStructuredString(header)).value();
    } catch (IllegalArgumentException e) {
      Exchanges.problem(exchange, 400, "Bad Request", "malformed Idempotency-Key: it must be an "
          + "RFC 8941 string (in double quotes) of 1-255 visible ASCII characters");
      return null;
    }
  }

  private static byte[] sha256(byte[] body) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(body);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** Configures an {@link IdempotentServer}. */
  public static final class Builder {
    private H2Database database;
    private final Map<String, OperationHandler> handlers = new LinkedHashMap<>();
    private int port;
    private int threads = 16;
    private Clock clock = Clock.systemUTC();
    private Duration retention = DEFAULT_RETENTION;
    private Duration pruneInterval = Duration.ofMinutes(1);
    private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    private FaultPlan faults = FaultPlan.NONE;
    private TenantResolver tenants = TenantResolver.TENANT_HEADER_UNAUTHENTICATED;

    private Builder() {}

    /** The database holding the idempotency table and the handlers' own tables. Required. */
    public Builder database(H2Database database) {
      this.database = Objects.requireNonNull(database, "database == null");
      return this;
    }

    /** Routes {@code POST /{operation}} to {@code handler}. */
    public Builder handler(String operation, OperationHandler handler) {
      if (operation == null || operation.isBlank() || operation.contains("/")) {
        throw new IllegalArgumentException("operation must be non-blank without '/': "
            + operation);
      }
      handlers.put(operation, Objects.requireNonNull(handler, "handler == null"));
      return this;
    }

    /** Loopback port; 0 (default) picks a free one. */
    public Builder port(int port) {
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.port = port;
      return this;
    }

    /** Request threads. Default 16. */
    public Builder threads(int threads) {
      this.threads = Arguments.atLeastOne("threads", threads);
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /** How long a key is remembered after its first use. Default 7 days. */
    public Builder retention(Duration retention) {
      this.retention = Arguments.positive("retention", retention);
      return this;
    }

    /** How often expired keys are pruned. Default 1 minute. */
    public Builder pruneInterval(Duration pruneInterval) {
      this.pruneInterval = Arguments.positive("pruneInterval", pruneInterval);
      return this;
    }

    /** Largest request body. Default 1 MiB. */
    public Builder maxBodyBytes(int maxBodyBytes) {
      this.maxBodyBytes = Arguments.atLeastOne("maxBodyBytes", maxBodyBytes);
      return this;
    }

    /** Faults to inject (tests, demo). Default {@link FaultPlan#NONE}. */
    /**
     * Which tenant a request acts for. Default {@link
     * TenantResolver#TENANT_HEADER_UNAUTHENTICATED}: the client's {@code Outbox-Tenant} header,
     * not authenticated. Production receivers derive it from the request's credentials, for
     * example {@link TenantResolver#bearerTokens}.
     */
    public Builder tenants(TenantResolver tenants) {
      this.tenants = Objects.requireNonNull(tenants, "tenants == null");
      return this;
    }

    public Builder faults(FaultPlan faults) {
      this.faults = Objects.requireNonNull(faults, "faults == null");
      return this;
    }

    /**
     * Starts listening on 127.0.0.1.
     *
     * @throws IOException when the port cannot be bound or the database cannot be prepared
     */
    public IdempotentServer start() throws IOException {
      if (database == null) {
        throw new IllegalStateException("database is required");
      }
      if (handlers.isEmpty()) {
        throw new IllegalStateException("register at least one handler");
      }
      return new IdempotentServer(this);
    }
  }
}
