package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.Migration;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * Brings one component's tables up to date by running its numbered {@link Migration}s that the
 * history table {@code outbox_schema_history(component, version, description, applied_at)} does
 * not list yet, under the file's migration lock ({@link Dialect#lockMigrations}). A file whose
 * history holds a version newer than the code knows is refused, never downgraded.
 */
public final class SchemaMigrator {
  /**
   * How long a migration keeps running again through races with other processes opening the same
   * new file, from the first one. Longer than a handover's bound: one try can itself wait out a
   * row-lock timeout (10 s by default) behind another opener's step, and with three processes
   * opening a new file at once a migration was seen to fail after a lock timeout used up a 10 s
   * window ({@code StorageErrorsTest}).
   */
  public static final Duration RETRY_FOR = Duration.ofSeconds(60);

  private SchemaMigrator() {}

  /**
   * @return the schema version of {@code component} after migrating
   * @throws OutboxStorageException when the file is newer than the code or a step fails
   */
  public static int migrate(JdbcDatabase database, String component, List<Migration> steps,
      Clock clock) {
    if (database.readOnly()) {
      throw new OutboxStorageException("cannot migrate " + component + " tables in "
          + database.file() + ": the database is opened read-only");
    }
    Dialect dialect = database.dialect();
    try {
      // Steps are idempotent: a step another process opening the same file at the same moment
      // made fail (a lock race, concurrent DDL) is run again, as a handover is.
      return database.retry(() -> migrateOnce(database.dataSource(), dialect, database.file(),
          component, steps, clock), dialect::isConcurrentSchemaChange, RETRY_FOR);
    } catch (SQLException e) {
      throw database.onStatement("schema migration of " + component, e);
    }
  }

  private static int migrateOnce(DataSource dataSource, Dialect dialect, Path file,
      String component, List<Migration> steps, Clock clock) throws SQLException {
    int latest = steps.get(steps.size() - 1).version();
    try (Connection c = dataSource.getConnection()) {
      try (Statement s = c.createStatement()) {
        s.execute(OutboxTables.HISTORY_DDL);
      }
      int current = checkedVersion(c, file, component, latest);
      if (current >= latest) {
        return current;
      }
      try (Dialect.MigrationLock lock = dialect.lockMigrations(dataSource, c)) {
        // what another process migrated while this one waited for the lock
        current = checkedVersion(c, file, component, latest);
        // a step a killed process was running may have left a table under its copy's name
        dialect.finishInterruptedRebuilds(c, OutboxTables.LIBRARY_TABLES);
        for (Migration step : steps) {
          if (step.version() <= current) {
            continue;
          }
          try (Statement s = c.createStatement()) {
            for (String sql : step.statements()) {
              s.execute(sql);
            }
          }
          record(c, dialect, component, step, clock);
        }
        lock.finished();
      }
      return Math.max(current, latest);
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
  public static int installedVersion(JdbcDatabase database, String component) {
    try {
      return database.retry(() -> {
        try (Connection c = database.dataSource().getConnection()) {
          if (!hasHistory(c)) {
            return 0;
          }
          return currentVersion(c, component);
        }
      });
    } catch (SQLException e) {
      throw database.onStatement("reading the schema version of " + component, e);
    }
  }

  private static boolean hasHistory(Connection c) throws SQLException {
    try (ResultSet tables = c.getMetaData().getTables(null, null, "%", null)) {
      while (tables.next()) {
        if ("outbox_schema_history".equalsIgnoreCase(tables.getString("TABLE_NAME"))) {
          return true;
        }
      }
    }
    return false;
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

  private static void record(Connection c, Dialect dialect, String component, Migration step,
      Clock clock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_schema_history "
        + "(component, version, description, applied_at) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, component);
      ps.setInt(2, step.version());
      ps.setString(3, step.description());
      ps.setLong(4, clock.millis());
      ps.executeUpdate();
    } catch (SQLException e) {
      if (!dialect.isUniqueViolation(e)) {
        throw e;
      }
      // Another process applied the same idempotent step at the same time.
    }
  }
}
