package dev.outboxreplay.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * What one engine's SQL says differently from the statements the JDBC stores share: the schema
 * and its append-only migrations, how an update returns its rows, index hints, how an id is
 * bound, how a unique violation and a concurrent schema change look, and how the migration lock
 * is held. A third engine is a dialect, its per-file {@link JdbcDatabase} and a contract-test
 * subclass. Implementations are stateless.
 */
public interface Dialect {

  /** The engine's name, for messages: {@code h2}, {@code sqlite}. */
  String name();

  /** The outbox tables' migrations, oldest first; append-only. */
  List<Migration> outboxMigrations();

  /** The inbox table's migrations, oldest first; append-only. */
  List<Migration> inboxMigrations();

  /**
   * A statement that runs {@code update} (an {@code UPDATE ... WHERE ...} without a returning
   * clause) and returns {@code columns} of each row it changed, as they are after the update.
   */
  String updateReturning(String update, String columns);

  /**
   * The SQL expression a claim sets its fencing token to: the file's next value of one sequence,
   * larger than every token handed out before, in this process or another, across kills.
   */
  String nextFencingToken();

  /**
   * Runs before each claim's update, in its transaction, for an engine whose sequence is a row
   * that {@link #nextFencingToken()} reads after this moves it on; nothing for an engine with
   * sequences of its own.
   */
  void advanceFencingToken(Connection transaction) throws SQLException;

  /**
   * Runs first in a transaction that will write: takes the file's write lock now (waiting for it
   * as the engine waits for locks) where the engine would otherwise fail a transaction that read
   * first and wrote later (SQLite's deferred transactions); nothing where row locks do.
   */
  void beginWrite(Connection transaction) throws SQLException;

  /** What follows a table and its alias in {@code FROM} to read {@code index}; may be empty. */
  String indexHint(String index);

  /** Binds a command id. */
  void setId(PreparedStatement statement, int index, UUID id) throws SQLException;

  /** Reads a command id. */
  UUID getId(ResultSet row, int column) throws SQLException;

  /**
   * Makes the next transaction on {@code connection} (auto-commit off) read the whole database as
   * of its first read, whatever commits meanwhile.
   */
  void readOneSnapshot(Connection connection) throws SQLException;

  /** True when {@code e} reports a unique index or primary key violation. */
  boolean isUniqueViolation(SQLException e);

  /**
   * True when a statement that fails is undone on its own and leaves its transaction open and as
   * it was before the statement (H2, SQLite). A single-statement write then needs no savepoint of
   * its own to fail without undoing the caller's earlier work. False, the safe answer, for an
   * engine that aborts the whole transaction on a failed statement (PostgreSQL).
   */
  default boolean failedStatementLeavesTransactionIntact() {
    return false;
  }

  /**
   * True when a batched insert's {@code getGeneratedKeys} returns every row's key; false makes
   * the store insert row by row with {@code RETURNING seq}.
   */
  boolean batchReturnsGeneratedKeys();

  /**
   * True for the failures seen when processes that open one new file at the same moment run the
   * same idempotent migration steps: running the migration again finds the other's work.
   */
  boolean isConcurrentSchemaChange(SQLException e);

  /**
   * Takes the file's migration lock for steps run on {@code steps}, a connection in auto-commit
   * mode, so that two processes never run steps at the same time. Released by {@link
   * MigrationLock#close()}; {@link MigrationLock#finished()} first makes the steps durable where
   * they ran in the lock's transaction.
   */
  MigrationLock lockMigrations(DataSource dataSource, Connection steps) throws SQLException;

  /**
   * The table whose rows a table named {@code name} holds when it is a copy the engine made to
   * rebuild that table in several commits, empty for any other name. H2 runs {@code ALTER TABLE
   * ... ADD COLUMN} and {@code DROP COLUMN} as: make {@code NAME_COPY_s_n}, copy the rows, drop
   * {@code NAME}, rename the copy; a process killed in between leaves the copy behind, with or
   * without {@code NAME}. Engines whose schema changes are transactional leave no such copy.
   */
  default Optional<String> rebuiltTable(String name) {
    return Optional.empty();
  }

  /**
   * Finishes what interrupted rebuilds of {@code tables} left (see {@link #rebuiltTable}): a copy
   * whose table is gone takes the table's name back, with its indexes and constraints; a copy
   * beside its table (the process was killed before the drop, so the table holds every row) is
   * dropped. Runs on {@code steps} under the migration lock, before any step, so no rebuild is
   * under way. Does nothing where the engine leaves no copies.
   *
   * @throws dev.outboxreplay.OutboxStorageException when more than one copy of a table that is
   *     gone is left and nothing tells which one is the table; nothing is changed then
   */
  default void finishInterruptedRebuilds(Connection steps, Set<String> tables)
      throws SQLException {
    // nothing to finish
  }

  /** The file's migration lock, held until closed. */
  interface MigrationLock extends AutoCloseable {
    /** The steps ran: make them durable, where they ran in the lock's transaction. */
    void finished() throws SQLException;

    /** Releases the lock; steps not {@linkplain #finished() finished} are rolled back if they can be. */
    @Override
    void close() throws SQLException;
  }
}
