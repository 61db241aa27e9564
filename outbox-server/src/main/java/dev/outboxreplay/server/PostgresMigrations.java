package dev.outboxreplay.server;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.Migration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * Append-only schema steps on PostgreSQL, each in one transaction with its history row, under a
 * transaction-scoped advisory lock: nodes that start together migrate one after the other, and
 * the later ones find the work done. PostgreSQL's DDL is transactional, so a node killed midway
 * leaves nothing half-made.
 */
final class PostgresMigrations {
  /** The advisory lock's key: any constant that no other component of the database uses. */
  private static final long LOCK_KEY = 0x4F42_5250_5256L; // "OBRPRV"

  private PostgresMigrations() {}

  static int migrate(javax.sql.DataSource dataSource, List<Migration> steps) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")");
        s.execute("CREATE TABLE IF NOT EXISTS server_schema_history (version INT PRIMARY KEY, "
            + "description VARCHAR(200) NOT NULL, applied_at TIMESTAMPTZ NOT NULL "
            + "DEFAULT now())");
        int current;
        try (ResultSet rs = s.executeQuery(
            "SELECT COALESCE(MAX(version), 0) FROM server_schema_history")) {
          rs.next();
          current = rs.getInt(1);
        }
        int latest = steps.get(steps.size() - 1).version();
        if (current > latest) {
          throw new OutboxStorageException("the database's idempotency records are at schema "
              + "version " + current + ", newer than this release's " + latest
              + ": run a newer release", null, false);
        }
        for (Migration step : steps) {
          if (step.version() <= current) {
            continue;
          }
          for (String sql : step.statements()) {
            s.execute(sql);
          }
          try (PreparedStatement ps = c.prepareStatement(
              "INSERT INTO server_schema_history (version, description) VALUES (?, ?)")) {
            ps.setInt(1, step.version());
            ps.setString(2, step.description());
            ps.executeUpdate();
          }
          current = step.version();
        }
        c.commit();
        return current;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new OutboxStorageException("migrating the idempotency records failed: "
          + e.getMessage(), e, false);
    }
  }
}
