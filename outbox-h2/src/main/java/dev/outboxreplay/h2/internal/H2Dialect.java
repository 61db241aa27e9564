package dev.outboxreplay.h2.internal;

import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.Migration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * H2's SQL where it differs: {@code FINAL TABLE} for an update's rows, {@code USE INDEX} hints,
 * native UUIDs, batched inserts that hand back every key, and the migration lock on a row of
 * {@code outbox_schema_lock} held by a second connection (H2 commits each DDL statement itself).
 */
public final class H2Dialect implements Dialect {
  public static final H2Dialect INSTANCE = new H2Dialect();
  /** H2's isolation level that reads the whole database as of the first read. */
  private static final int SNAPSHOT_ISOLATION = 6;
  /**
   * H2 errors seen when processes that open one new file at the same moment run the same
   * idempotent steps at once: the "General error" (50000) while a server starts, and a table,
   * index or sequence another session is creating at that instant reported as missing (42102) or
   * as existing (42101, 42111, 42121, 90035) despite {@code IF [NOT] EXISTS}. Run again, the
   * migration finds the other session's work and goes on. (A missing column, 42122, is not one of
   * them: steps run under the file's migration lock, and a column missing after that is missing
   * for good.)
   */
  private static final Set<Integer> CONCURRENT_DDL =
      Set.of(50000, 42101, 42102, 42111, 42121, 90035);

  private H2Dialect() {}

  @Override
  public String name() {
    return "h2";
  }

  /** A failed statement is rolled back on its own; the transaction goes on. */
  @Override
  public boolean failedStatementLeavesTransactionIntact() {
    return true;
  }

  @Override
  public List<Migration> outboxMigrations() {
    return OutboxSchema.MIGRATIONS;
  }

  @Override
  public List<Migration> inboxMigrations() {
    return InboxSchema.MIGRATIONS;
  }

  @Override
  public String updateReturning(String update, String columns) {
    return "SELECT " + columns + " FROM FINAL TABLE (" + update + ")";
  }

  @Override
  public String nextFencingToken() {
    return "NEXT VALUE FOR outbox_fencing_token";
  }

  @Override
  public void advanceFencingToken(Connection transaction) {
    // the sequence moves on as the claim reads it
  }

  @Override
  public void beginWrite(Connection transaction) {
    // row locks: a transaction waits for the rows it writes, whatever it read before
  }

  @Override
  public String indexHint(String index) {
    return " USE INDEX (" + index + ")";
  }

  @Override
  public void setId(PreparedStatement statement, int index, UUID id) throws SQLException {
    statement.setObject(index, id);
  }

  @Override
  public UUID getId(ResultSet row, int column) throws SQLException {
    return row.getObject(column, UUID.class);
  }

  @Override
  public void readOneSnapshot(Connection connection) throws SQLException {
    connection.setTransactionIsolation(SNAPSHOT_ISOLATION);
  }

  @Override
  public boolean isUniqueViolation(SQLException e) {
    return H2Errors.isUniqueViolation(e);
  }

  @Override
  public boolean batchReturnsGeneratedKeys() {
    return true;
  }

  @Override
  public boolean isConcurrentSchemaChange(SQLException e) {
    return H2Errors.isRetryable(e) || CONCURRENT_DDL.contains(e.getErrorCode());
  }

  @Override
  public Optional<String> rebuiltTable(String name) {
    return InterruptedRebuilds.rebuiltTable(name);
  }

  @Override
  public void finishInterruptedRebuilds(Connection steps, Set<String> tables)
      throws SQLException {
    InterruptedRebuilds.finish(steps, tables);
  }

  /**
   * The row of {@code outbox_schema_lock}, held in an open transaction of a second connection
   * until it rolls back (or its process dies, which ends its session); steps run on {@code steps},
   * because H2 commits each DDL statement and that would end the lock's transaction. Without the
   * lock, two processes opening a new file at once ran {@code ALTER TABLE ... ADD COLUMN} steps
   * together, and H2 could finish one of them on the table as it was before the other's, so the
   * table lost a column for good (seen in {@code StorageErrorsTest}: "Column FIRST_SENT_AT not
   * found"). Another opener waits up to the row-lock timeout, and its migration runs again after.
   */
  @Override
  public MigrationLock lockMigrations(DataSource dataSource, Connection steps)
      throws SQLException {
    Connection lock = dataSource.getConnection();
    try {
      holdMigrationLock(lock);
    } catch (SQLException | RuntimeException e) {
      lock.close();
      throw e;
    }
    return new MigrationLock() {
      @Override
      public void finished() {
        // each step committed itself
      }

      @Override
      public void close() throws SQLException {
        try (lock) {
          lock.rollback();
        }
      }
    };
  }

  /** Takes the lock row on {@code lock}, leaving its transaction open. */
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
}
