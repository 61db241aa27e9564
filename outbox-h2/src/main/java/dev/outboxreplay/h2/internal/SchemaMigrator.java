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
   * index or sequence another session is creating at that instant reported as missing (42102) or
   * as existing (42101, 42111, 42121, 90035) despite {@code IF [NOT] EXISTS}. Run again, the
   * migration finds the other session's work and goes on. (A missing column, 42122, is not one of
   * them: steps run under the file's migration lock, and a column missing after that is missing
   * for good.)
   */
  private static final java.util.Set<Integer> CONCURRENT_DDL =
      java.util.Set.of(50000, 42101, 42102, 42111, 42121, 90035);
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
      int current = checkedVersion(c, file, component, latest);
      if (current >= latest) {
        return current;
      }
      try (Connection lock = dataSource.getConnection()) {
        holdMigrationLock(lock);
        try {
          // what another process migrated while this one waited for the lock
          current = checkedVersion(c, file, component, latest);
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
        } finally {
          lock.rollback();
        }
      }
      return Math.max(current, latest);
    }
  }

  /**
   * Takes the file's migration lock on {@code lock}: the row of {@code outbox_schema_lock}, held
   * in an open transaction until that connection rolls back (or its process dies, which ends its
   * session). Steps run on another connection, because H2 commits each DDL statement and that
   * would end this transaction. Without the lock, two processes opening a new file at once ran
   * {@code ALTER TABLE ... ADD COLUMN} steps together, and H2 could finish one of them on the
   * table as it was before the other's, so the table lost a column for good (seen in {@code
   * StorageErrorsTest}: "Column FIRST_SENT_AT not found", and all three openers, the serving one
   * too, failing their migration again for the whole retry window). Another opener waits here up
   * to the row-lock timeout, and its migration runs again after that.
   */
  static void holdMigrationLock(Connection lock) throws SQLException {
    try (Statement s = lock.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS outbox_schema_lock (id INT PRIMARY KEY)");
      s.execute("MERGE INTO outbox_schema_lock KEY (id) VALUES (1)");
    } catch (SQLException e) {
      if (!H2Errors.isUniqueViolation(e)) {
        throw e;
      }
      // another opener inserted the row at the same moment
    }
    lock.setAutoCommit(false);
    try (Statement s = lock.createStatement()) {
      s.executeQuery("SELECT id FROM outbox_schema_lock WHERE id = 1 FOR UPDATE").close();
    }
  }

  /** The recorded version of {@code component}, refused when newer than {@code latest}. */
  private static int checkedVersion(Connection c, Path file, String component, int latest)
      throws SQLException {
    int current = currentVersion(c, component);
    if (current > latest) {
      throw new OutboxStorageException("cannot open " + component + " database " + file + ": its "
          + component + " schema is version " + current + ", written by a newer release; "
          + "this release knows versions up to " + latest + " (upgrade the library to open it)");
    }
    return current;
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
