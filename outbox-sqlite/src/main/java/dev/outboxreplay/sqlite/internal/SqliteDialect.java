package dev.outboxreplay.sqlite.internal;

import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.Migration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * SQLite's SQL where it differs: {@code RETURNING} for an update's rows, {@code INDEXED BY}
 * where the H2 dialect hints an index ({@code SqliteQueryPlanTest} checks the plans), ids as
 * text, inserts that return their {@code seq} one at a time, fencing tokens from a counter row,
 * and writes that take the file's write lock at their start. SQLite has one writer at a time; a transaction
 * that read first and wrote later fails at once when another writer committed meanwhile
 * ({@code SQLITE_BUSY_SNAPSHOT}), where one that writes first waits its turn.
 */
public final class SqliteDialect implements Dialect {
  public static final SqliteDialect INSTANCE = new SqliteDialect();
  /** A write that changes nothing: it takes the file's write lock (waiting for it). */
  private static final String TAKE_WRITE_LOCK =
      "UPDATE outbox_schema_history SET applied_at = applied_at WHERE component = ''";

  private SqliteDialect() {}

  @Override
  public String name() {
    return "sqlite";
  }

  /** A failed statement is rolled back on its own; the transaction goes on. */
  @Override
  public boolean failedStatementLeavesTransactionIntact() {
    return true;
  }

  @Override
  public List<Migration> outboxMigrations() {
    return SqliteSchema.OUTBOX;
  }

  @Override
  public List<Migration> inboxMigrations() {
    return SqliteSchema.INBOX;
  }

  @Override
  public String updateReturning(String update, String columns) {
    return update + " RETURNING " + columns;
  }

  @Override
  public String nextFencingToken() {
    return "(SELECT value FROM outbox_fencing WHERE id = 1)";
  }

  @Override
  public void advanceFencingToken(Connection transaction) throws SQLException {
    try (PreparedStatement s =
        transaction.prepareStatement("UPDATE outbox_fencing SET value = value + 1 WHERE id = 1")) {
      s.executeUpdate();
    }
  }

  @Override
  public void beginWrite(Connection transaction) throws SQLException {
    // prepared, not a plain statement: the pool's connections keep it compiled
    try (PreparedStatement s = transaction.prepareStatement(TAKE_WRITE_LOCK)) {
      s.executeUpdate();
    }
  }

  /**
   * {@code INDEXED BY}: without statistics ({@code ANALYZE} is never run on a user's file)
   * SQLite's planner read the claim's candidates through the status index and sorted the whole
   * backlog for every claim (96 ms per claim of 8 with 100,000 commands queued); the claim index
   * reads the due range in order and stops at the limit.
   */
  @Override
  public String indexHint(String index) {
    return " INDEXED BY " + index;
  }

  @Override
  public void setId(PreparedStatement statement, int index, UUID id) throws SQLException {
    statement.setString(index, id.toString());
  }

  @Override
  public UUID getId(ResultSet row, int column) throws SQLException {
    return UUID.fromString(row.getString(column));
  }

  @Override
  public void readOneSnapshot(Connection connection) {
    // a transaction's reads in WAL mode see the database as of its first read
  }

  @Override
  public boolean isUniqueViolation(SQLException e) {
    return SqliteErrors.isUniqueViolation(e);
  }

  @Override
  public boolean batchReturnsGeneratedKeys() {
    return false;
  }

  @Override
  public boolean isConcurrentSchemaChange(SQLException e) {
    return SqliteErrors.isBusy(e);
  }

  /**
   * The steps run in one transaction on {@code steps} that holds the file's write lock: SQLite's
   * DDL is transactional, so a migration is done whole or not at all, and another opener waits
   * for the lock (its busy timeout) and then finds the steps done.
   */
  @Override
  public MigrationLock lockMigrations(DataSource dataSource, Connection steps)
      throws SQLException {
    steps.setAutoCommit(false);
    try {
      beginWrite(steps);
    } catch (SQLException e) {
      steps.rollback();
      steps.setAutoCommit(true);
      throw e;
    }
    return new MigrationLock() {
      private boolean finished;

      @Override
      public void finished() throws SQLException {
        steps.commit();
        finished = true;
      }

      @Override
      public void close() throws SQLException {
        if (!finished) {
          steps.rollback();
        }
        steps.setAutoCommit(true);
      }
    };
  }
}
