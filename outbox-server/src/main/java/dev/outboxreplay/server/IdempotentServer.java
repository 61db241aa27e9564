package dev.outboxreplay.server;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.internal.Arguments;
import dev.outboxreplay.server.internal.FaultInjection;
import dev.outboxreplay.server.internal.IdempotencyProtocol;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.server.internal.JettyFront;
import dev.outboxreplay.server.internal.RequestProcessor;
import dev.outboxreplay.server.internal.RequestRouter;
import java.io.IOException;
import java.net.InetAddress;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reference idempotent receiver following the IETF Idempotency-Key draft, over Jetty and an
 * H2 idempotency table. Routes: {@code POST /{operation}} to the registered
 * {@link OperationHandler}, and the reconciliation endpoint described in {@link HttpContract}.
 *
 * <ul>
 *   <li>First request with a key: processed; the handler's effect and the stored answer commit
 *       in one transaction.
 *   <li>Repeat after completion, same payload: the stored answer, byte for byte, with
 *       {@code Idempotent-Replayed: true}; the handler does not run.
 *   <li>Same key, different payload: 422. Same key while the first is processed: 409 with
 *       problem type {@code urn:outbox:problem:request-in-progress}. Missing or malformed key:
 *       400. Body over the limit: 413. Unknown route: 404. Nothing is stored for these.
 *   <li>Keys are scoped by the tenant ({@link TenantResolver}) and kept for the retention
 *       period (default 7 days) after their first use, then pruned in the background in small
 *       batches.
 * </ul>
 *
 * <p>Slow or stalled clients hold no request thread: request heads and bodies are read without
 * one. A connection is closed when a request head does not arrive within {@link
 * Builder#requestReadTimeout} of the connection opening or of the previous answer, when the body
 * does not arrive within it after the head, or when the connection is silent for {@link
 * Builder#idleTimeout}; at most {@link Builder#maxConnections} connections are open at once (the
 * operating system queues further connects).
 *
 * <p>At start the server releases the claims its own node left {@code started} before it
 * restarted (their effects never committed), so their retries are processed afresh; claims of
 * other nodes on a shared database wait out their leases. It listens on {@code 127.0.0.1} unless
 * {@link Builder#bindAddress} names another address; an address other machines reach needs
 * authenticated tenants ({@link Builder#tenants}) and logs a warning. Thread-safe.
 */
public final class IdempotentServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(IdempotentServer.class);
  /** Default retention of a key after its first use. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  /** Default largest request body: 1 MiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
  /** Default most open connections. */
  public static final int DEFAULT_MAX_CONNECTIONS = 256;
  /** Default time a connection may stay silent before it is closed. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);
  /** Default {@link Builder#stopGrace}: how long {@link #close()} gives requests in flight. */
  public static final Duration DEFAULT_STOP_GRACE = Duration.ofSeconds(1);
  /** Default time to receive a request's body once its head arrived. */
  public static final Duration DEFAULT_REQUEST_READ_TIMEOUT = Duration.ofSeconds(10);

  private final IdempotencyRecordStore<Connection> records;
  private final Clock clock;
  private final JettyFront http;
  private final ScheduledExecutorService pruner;

  private IdempotentServer(Builder b) throws IOException {
    this.clock = b.clock;
    this.records = b.records != null ? b.records
        : JdbcIdempotencyRecords.onH2(b.database, b.node, b.lease);
    int released = records.releaseOwnStarted(clock.instant());
    if (released > 0) {
      LOG.info("{} request(s) this node left started before it restarted may be retried now",
          released);
    }
    IdempotencyProtocol protocol = new IdempotencyProtocol(records, clock, b.retention);
    RequestProcessor processor = b.faults == FaultPlan.NONE ? protocol
        : new FaultInjection(protocol, b.faults);
    RequestRouter router = new RequestRouter(b.handlers, b.tenants, processor, protocol,
        b.maxBodyBytes);
    if (reachableFromOtherMachines(b.bindAddress)) {
      LOG.warn("the receiver listens on {}, which other machines can reach: it speaks plain "
          + "HTTP, so put a TLS-terminating proxy in front of it and let only that proxy reach "
          + "it", b.bindAddress.getHostAddress());
    }
    this.http = new JettyFront(b.bindAddress, b.port, new JettyFront.Limits(b.threads,
        b.maxConnections, b.idleTimeout, b.requestReadTimeout, b.maxBodyBytes, b.stopGrace), router::route);
    this.pruner = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "idempotency-pruner");
      t.setDaemon(true);
      return t;
    });
    pruner.scheduleWithFixedDelay(this::pruneQuietly, b.pruneInterval.toMillis(),
        b.pruneInterval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** A builder; {@link Builder#database(H2Database)} and at least one handler are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The port it listens on (useful with port 0). */
  public int port() {
    return http.port();
  }

  /**
   * Whether a receiver bound to {@code address} is reachable from other machines: any address
   * but a loopback one (the wildcard included).
   */
  public static boolean reachableFromOtherMachines(InetAddress address) {
    return !address.isLoopbackAddress();
  }

  /** {@code http://{bind address}:{port}}, {@code http://127.0.0.1:{port}} by default. */
  public String baseUrl() {
    String host = http.host();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port();
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

  /**
   * Closes connections waiting for a request, stops listening (requests in flight get up to the
   * {@linkplain Builder#stopGrace stop grace}, by default a second), lets running requests and a
   * running prune finish without interrupting them (up to 5 s each), and stops pruning. The
   * database stays open: it belongs to the caller.
   */
  @Override
  public void close() {
    http.close();
    pruner.shutdown();
    try {
      if (!pruner.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("the idempotency pruner still runs 5 s after close; left to finish");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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

  /** Configures an {@link IdempotentServer}. */
  public static final class Builder {
    private H2Database database;
    private IdempotencyRecordStore<Connection> records;
    private String node = JdbcIdempotencyRecords.DEFAULT_NODE;
    private Duration lease = JdbcIdempotencyRecords.DEFAULT_LEASE;
    private final Map<String, OperationHandler> handlers = new LinkedHashMap<>();
    private int port;
    private InetAddress bindAddress = InetAddress.getLoopbackAddress();
    private int threads = 16;
    private Clock clock = Clock.systemUTC();
    private Duration retention = DEFAULT_RETENTION;
    private Duration pruneInterval = Duration.ofMinutes(1);
    private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    private int maxConnections = DEFAULT_MAX_CONNECTIONS;
    private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
    private Duration requestReadTimeout = DEFAULT_REQUEST_READ_TIMEOUT;
    private Duration stopGrace = DEFAULT_STOP_GRACE;
    private FaultPlan faults = FaultPlan.NONE;
    private TenantResolver tenants = TenantResolver.TENANT_HEADER_UNAUTHENTICATED;

    private Builder() {}

    /**
     * An H2 file holding the idempotency table and the handlers' own tables: the records are
     * {@link JdbcIdempotencyRecords#onH2} with {@link #node} and {@link #lease}. This or {@link
     * #records} is required.
     */
    public Builder database(H2Database database) {
      this.database = Objects.requireNonNull(database, "database == null");
      return this;
    }

    /**
     * The idempotency records to keep, for example {@link JdbcIdempotencyRecords#onPostgres}
     * shared by several nodes; handlers then run in the transactions of its database. Instead
     * of {@link #database}.
     */
    public Builder records(IdempotencyRecordStore<Connection> records) {
      this.records = Objects.requireNonNull(records, "records == null");
      return this;
    }

    /**
     * This process's name among the receiver processes sharing the {@link #database} file
     * (default {@value JdbcIdempotencyRecords#DEFAULT_NODE}): at start it releases the requests
     * it left started, and only those. Give each process its own.
     */
    public Builder node(String node) {
      this.node = Objects.requireNonNull(node, "node == null");
      return this;
    }

    /**
     * How long a claim on a key lasts before another node may take it over (default 30 s):
     * longer than the slowest handler. A handler still running when it ends commits nothing.
     */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease == null");
      return this;
    }

    /** Routes {@code POST /{operation}} to {@code handler}. */
    public Builder handler(String operation, OperationHandler handler) {
      handlers.put(Operations.requireName(operation),
          Objects.requireNonNull(handler, "handler == null"));
      return this;
    }

    /** Port on the bind address; 0 (default) picks a free one. */
    public Builder port(int port) {
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * Threads that run complete requests (the handler and the idempotency table). Default 16.
     * Reading requests takes none of them.
     */
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

    /**
     * Most connections open at once; further connects wait in the operating system's accept
     * queue until one closes. Default {@value #DEFAULT_MAX_CONNECTIONS}.
     */
    public Builder maxConnections(int maxConnections) {
      this.maxConnections = Arguments.atLeastOne("maxConnections", maxConnections);
      return this;
    }

    /** How long a connection may send nothing before it is closed. Default 30 s. */
    public Builder idleTimeout(Duration idleTimeout) {
      this.idleTimeout = Arguments.positive("idleTimeout", idleTimeout);
      return this;
    }

    /**
     * How long a request head may take to arrive after the connection opens or after the
     * previous answer, and how long its body may take after the head; a connection over either
     * is closed without an answer. Default 10 s.
     */
    public Builder requestReadTimeout(Duration requestReadTimeout) {
      this.requestReadTimeout = Arguments.positive("requestReadTimeout", requestReadTimeout);
      return this;
    }

    /**
     * How long {@link IdempotentServer#close()} lets requests being answered finish before it
     * closes their connections; connections waiting for a request are closed at once. Default 1 s.
     */
    public Builder stopGrace(Duration stopGrace) {
      this.stopGrace = Arguments.positive("stopGrace", stopGrace);
      return this;
    }

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

    /**
     * The address to listen on. Default {@code 127.0.0.1}: only processes on this machine reach
     * the receiver. Any other loopback address keeps it so. An address other machines reach
     * (a network interface's, or the wildcard {@code 0.0.0.0}) is an explicit choice with its own
     * warning in the log at start: the receiver speaks plain HTTP, so put it behind a
     * TLS-terminating proxy that alone reaches it. {@link #start()} refuses such an address
     * while the tenant comes from the unauthenticated header (set {@link #tenants}).
     */
    public Builder bindAddress(InetAddress address) {
      this.bindAddress = Objects.requireNonNull(address, "address == null");
      return this;
    }

    /** Faults to inject (tests, demo). Default {@link FaultPlan#NONE}. */
    public Builder faults(FaultPlan faults) {
      this.faults = Objects.requireNonNull(faults, "faults == null");
      return this;
    }

    /**
     * Starts listening on the bind address (127.0.0.1 by default).
     *
     * @throws IOException when the port cannot be bound or the database cannot be prepared
     * @throws IllegalStateException when records or handlers are missing, or the bind address is
     *     reachable from other machines while tenants are not authenticated
     */
    public IdempotentServer start() throws IOException {
      if (reachableFromOtherMachines(bindAddress)
          && tenants == TenantResolver.TENANT_HEADER_UNAUTHENTICATED) {
        throw new IllegalStateException("refusing to listen on " + bindAddress.getHostAddress()
            + ", which other machines reach, while any client may name its tenant: set "
            + "tenants(...), for example TenantResolver.bearerTokens(...)");
      }
      if ((database == null) == (records == null)) {
        throw new IllegalStateException("give exactly one of database(...) and records(...)");
      }
      if (handlers.isEmpty()) {
        throw new IllegalStateException("register at least one handler");
      }
      return new IdempotentServer(this);
    }
  }
}
