package dev.outboxreplay.server;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.Migration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/**
 * Append-only schema steps on PostgreSQL, for the receiver's tables and a handler's own: the
 * steps a database lacks run in one transaction with their history rows (table {@code
 * server_schema_history}, by component), under a transaction-scoped advisory lock, so nodes that
 * start together migrate one after the other and the later ones find the work done.
 * PostgreSQL's DDL is transactional: a node killed midway leaves nothing half-made.
 */
public final class PostgresMigrations {
  /** The advisory lock's key: any constant that no other component of the database uses. */
  private static final long LOCK_KEY = 0x4F42_5250_5256L; // "OBRPRV"

  private PostgresMigrations() {}

  /**
   * Applies the steps of {@code component} that the database has not recorded yet (the
   * receiver's records, the reference application's table, or a handler's own tables).
   *
   * @return the component's version now
   */
  public static int migrate(DataSource dataSource, String component, List<Migration> steps) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")");
        s.execute("CREATE TABLE IF NOT EXISTS server_schema_history ("
            + "component VARCHAR(100) NOT NULL, version INT NOT NULL, "
            + "description VARCHAR(200) NOT NULL, applied_at TIMESTAMPTZ NOT NULL "
            + "DEFAULT now(), PRIMARY KEY (component, version))");
        int current;
        try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(MAX(version), 0) "
            + "FROM server_schema_history WHERE component = ?")) {
          ps.setString(1, component);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            current = rs.getInt(1);
          }
        }
        int latest = steps.get(steps.size() - 1).version();
        if (current > latest) {
          throw new OutboxStorageException("the database's " + component + " tables are at "
              + "schema version " + current + ", newer than this release's " + latest
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
              "INSERT INTO server_schema_history (component, version, description) "
                  + "VALUES (?, ?, ?)")) {
            ps.setString(1, component);
            ps.setInt(2, step.version());
            ps.setString(3, step.description());
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
      throw new OutboxStorageException("migrating the " + component + " tables failed: "
          + e.getMessage(), e, false);
    }
  }
}
