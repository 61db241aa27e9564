package dev.outboxreplay.server;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.server.internal.Answer;
import dev.outboxreplay.server.internal.IdempotencyProtocol;
import dev.outboxreplay.server.internal.Incoming;
import dev.outboxreplay.server.internal.RequestRouter;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The Idempotency-Key guard as a Jetty 12 {@link Handler}, for an application that already runs
 * its own Jetty server: mounted where the application wants it (a {@code ContextHandler} at
 * {@code /sync}, say), it answers {@code POST /{operation}} for the operations it was given and
 * {@code GET /_outbox/reconcile}, with the protocol {@link IdempotentServer} speaks, and passes
 * every other request on (returns false) to the application's other handlers. Each operation's
 * {@link OperationHandler} runs in the transaction that stores its answer.
 *
 * <p>In a servlet container, {@link IdempotencyFilter} puts the same guard in front of the
 * application's servlets. For any other HTTP server, {@link #respond} is the protocol without
 * Jetty: hand it the method, path, headers and body, and write back the {@link Reply}.
 * Thread-safe; it blocks the calling thread while a handler runs, as Jetty allows for a handler
 * of the default (blocking) invocation type.
 */
public final class IdempotencyHandler extends Handler.Abstract {
  private final Map<String, OperationHandler> handlers;
  private final RequestRouter router;
  private final int maxBodyBytes;

  private IdempotencyHandler(Builder b) {
    this.handlers = Map.copyOf(b.handlers);
    this.maxBodyBytes = b.maxBodyBytes;
    IdempotencyProtocol protocol = new IdempotencyProtocol(b.records, b.clock, b.retention);
    this.router = new RequestRouter(handlers, b.tenants, protocol, protocol, b.maxBodyBytes);
  }

  /** A builder; the records and at least one operation are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * One answer, for a server other than Jetty to write back as it is.
   *
   * @param status the HTTP status
   * @param contentType the body's content type, or null
   * @param headers further headers ({@code Idempotent-Replayed}, {@code Retry-After}, ...)
   * @param body the body bytes
   */
  public record Reply(int status, String contentType, Map<String, String> headers, byte[] body) {}

  /** The largest request body this guard takes; a longer one is answered 413. */
  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  /** True when this guard answers {@code pathInContext}: one of its operations, or reconcile. */
  public boolean answers(String pathInContext) {
    return pathInContext.equals(HttpContract.RECONCILE_PATH)
        || pathInContext.length() > 1 && handlers.containsKey(pathInContext.substring(1));
  }

  /**
   * Answers one request.
   *
   * @param method the HTTP method
   * @param pathInContext the path below where the guard is mounted, raw (not percent-decoded),
   *     e.g. {@code /note.put}
   * @param header a request header's first value by name, or null
   * @param body the whole body, or null when it was longer than the guard's largest body
   */
  public Reply respond(String method, String pathInContext, UnaryOperator<String> header,
      byte[] body) {
    Answer answer = router.route(new Incoming(method, pathInContext, header, body));
    return new Reply(answer.status(), answer.contentType(), answer.headers(), answer.body());
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = Request.getPathInContext(request);
    if (!answers(path)) {
      return false;
    }
    byte[] body;
    try (InputStream in = Content.Source.asInputStream(request)) {
      byte[] read = in.readNBytes(maxBodyBytes + 1);
      body = read.length > maxBodyBytes ? null : read;
    }
    Reply reply = respond(request.getMethod(), path, name -> request.getHeaders().get(name),
        body);
    response.setStatus(reply.status());
    if (reply.contentType() != null) {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.contentType());
    }
    reply.headers().forEach((name, value) -> response.getHeaders().put(
        new HttpField(name, value)));
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, reply.body().length);
    response.write(true, ByteBuffer.wrap(reply.body()), callback);
    return true;
  }

  /** Configures an {@link IdempotencyHandler}. */
  public static final class Builder {
    private IdempotencyRecordStore<Connection> records;
    private final Map<String, OperationHandler> handlers = new LinkedHashMap<>();
    private TenantResolver tenants = TenantResolver.TENANT_HEADER_UNAUTHENTICATED;
    private Clock clock = Clock.systemUTC();
    private Duration retention = IdempotentServer.DEFAULT_RETENTION;
    private int maxBodyBytes = IdempotentServer.DEFAULT_MAX_BODY_BYTES;

    private Builder() {}

    /**
     * The idempotency records, for example {@link JdbcIdempotencyRecords#onPostgres} on the
     * application's database; each operation's handler runs in a transaction of theirs.
     * Required.
     */
    public Builder records(IdempotencyRecordStore<Connection> records) {
      this.records = Objects.requireNonNull(records, "records == null");
      return this;
    }

    /** Answers {@code POST /{operation}} with {@code handler}. */
    public Builder handler(String operation, OperationHandler handler) {
      handlers.put(Operations.requireName(operation),
          Objects.requireNonNull(handler, "handler == null"));
      return this;
    }

    /** Where a request's tenant comes from (default: the {@code Outbox-Tenant} header). */
    public Builder tenants(TenantResolver tenants) {
      this.tenants = Objects.requireNonNull(tenants, "tenants == null");
      return this;
    }

    /** The clock for records' times and leases (tests). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /** How long a key is kept after its first use (default 7 days). */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention, "retention == null");
      return this;
    }

    /** The largest request body (default 1 MiB); a longer one is answered 413. */
    public Builder maxBodyBytes(int maxBodyBytes) {
      if (maxBodyBytes < 1) {
        throw new IllegalArgumentException("maxBodyBytes must be positive: " + maxBodyBytes);
      }
      this.maxBodyBytes = maxBodyBytes;
      return this;
    }

    /**
     * The guard.
     *
     * @throws IllegalStateException without records or without an operation
     */
    public IdempotencyHandler build() {
      if (records == null) {
        throw new IllegalStateException("records are required");
      }
      if (handlers.isEmpty()) {
        throw new IllegalStateException("register at least one operation");
      }
      return new IdempotencyHandler(this);
    }
  }
}
