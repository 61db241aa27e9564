package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import dev.outboxreplay.h2.Migration;
import java.util.List;
import javax.sql.DataSource;

/**
 * Brings one component's tables up to date by running its numbered {@link Migration}s that the
 * history table {@code outbox_schema_history(component, version, description, applied_at)} does
 * not list yet. A file whose history holds a version newer than the code knows is refused, never
 * downgraded.
 */
public final class SchemaMigrator {
  /**
   * H2 errors seen when processes that open one new file at the same moment run the same
   * idempotent steps at once: the "General error" (50000) while a server starts, and a table,
   * column, index or sequence another session is creating at that instant reported as missing
   * (42102, 42122) or as existing (42101, 42111, 42121, 90035) despite {@code IF [NOT] EXISTS}.
   * Run again, the migration finds the other session's work and goes on. (42122: a step's
   * {@code UPDATE} of the column its {@code ADD COLUMN IF NOT EXISTS} found, while the other
   * session's {@code ALTER TABLE} was still replacing the table, seen in
   * {@code StorageErrorsTest}.)
   */
  private static final java.util.Set<Integer> CONCURRENT_DDL =
      java.util.Set.of(50000, 42101, 42102, 42111, 42121, 42122, 90035);
  /**
   * How long a migration keeps running again through such races, from the first one. Longer than
   * a handover's bound: one try can itself wait out a row-lock timeout (10 s by default) behind
   * another opener's step, and with three processes opening a new file at once a migration was
   * seen to fail after a lock timeout used up a 10 s window ({@code StorageErrorsTest}).
   */
  static final java.time.Duration RETRY_FOR = java.time.Duration.ofSeconds(60);

  private SchemaMigrator() {}

  /**
   * @return the schema version of {@code component} after migrating
   * @throws OutboxStorageException when the file is newer than the code or a step fails
   */
  public static int migrate(DataSource dataSource, Path file, String component,
      List<Migration> steps, Clock clock) {
    try {
      // Steps are idempotent: a step another process opening the same file at the same moment
      // made fail (a lock race, concurrent DDL, an H2 internal error while its server starts) is
      // run again, as a handover is.
      return Handover.retry(() -> migrateOnce(dataSource, file, component, steps, clock),
          SchemaMigrator::isRaceWithAnotherOpener, RETRY_FOR);
    } catch (SQLException e) {
      throw H2Errors.onStatement(file, "schema migration of " + component, e);
    }
  }

  static boolean isRaceWithAnotherOpener(SQLException e) {
    return H2Errors.isRetryable(e) || CONCURRENT_DDL.contains(e.getErrorCode());
  }

  private static int migrateOnce(DataSource dataSource, Path file, String component,
      List<Migration> steps, Clock clock) throws SQLException {
    int latest = steps.get(steps.size() - 1).version();
    try (Connection c = dataSource.getConnection()) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS outbox_schema_history ("
            + "component VARCHAR(50) NOT NULL, version INT NOT NULL, "
            + "description VARCHAR(200) NOT NULL, applied_at BIGINT NOT NULL, "
            + "PRIMARY KEY (component, version))");
      }
      int current = currentVersion(c, component);
      if (current > latest) {
        throw new OutboxStorageException("cannot open " + component + " database " + file + ": its "
            + component + " schema is version " + current + ", written by a newer release; "
            + "this release knows versions up to " + latest + " (upgrade the library to open it)");
      }
      for (Migration step : steps) {
        if (step.version() <= current) {
          continue;
        }
        try (Statement s = c.createStatement()) {
          for (String sql : step.statements()) {
            s.execute(sql);
          }
        }
        record(c, component, step, clock);
      }
      return Math.max(current, latest);
    }
  }

  /**
   * The version of {@code component} the file records, 0 when it has no history table or no step
   * of that component. Reads only.
   */
  public static int installedVersion(DataSource dataSource, Path file, String component) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES "
            + "WHERE TABLE_SCHEMA = 'PUBLIC' AND TABLE_NAME = 'OUTBOX_SCHEMA_HISTORY'")) {
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getInt(1) == 0) {
          return 0;
        }
      }
      return currentVersion(c, component);
    } catch (SQLException e) {
      throw H2Errors.onStatement(file, "reading the schema version of " + component, e);
    }
  }

  private static int currentVersion(Connection c, String component) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT COALESCE(MAX(version), 0) FROM outbox_schema_history WHERE component = ?")) {
      ps.setString(1, component);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void record(Connection c, String component, Migration step, Clock clock)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_schema_history "
        + "(component, version, description, applied_at) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, component);
      ps.setInt(2, step.version());
      ps.setString(3, step.description());
      ps.setLong(4, clock.millis());
      ps.executeUpdate();
    } catch (SQLException e) {
      if (!H2Errors.isUniqueViolation(e)) {
        throw e;
      }
      // Another process applied the same idempotent step at the same time.
    }
  }
}
