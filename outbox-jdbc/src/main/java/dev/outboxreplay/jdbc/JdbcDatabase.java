package dev.outboxreplay.jdbc;

import dev.outboxreplay.OutboxException;
import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * One open database file, as the JDBC stores need it: connections, the engine's dialect, and what
 * the engine does around a commit and a failure. Each engine module implements it in one object
 * per open file (H2's {@code H2Database}, SQLite's {@code SqliteDatabase}), which owns everything
 * the engine needs around its file; the stores never reach past it.
 *
 * <p>Implementations are thread-safe.
 */
public interface JdbcDatabase extends AutoCloseable {

  /**
   * Closes the file: the stores' close actions run first ({@link #beforeClose}), then the pool.
   * Rows already committed stay on disk. Idempotent; throws no checked exception.
   */
  @Override
  void close();

  /** Pooled connections to this file, for the stores and for the application's own tables. */
  DataSource dataSource();

  /** The database file on disk. */
  Path file();

  /** Whether the file was opened for reading only: nothing may be written. */
  boolean readOnly();

  /** What the engine's SQL says differently. */
  Dialect dialect();

  /**
   * Called after each commit of a transaction that wrote outbox or inbox rows, by the stores for
   * their own and by {@link #inTransaction} for the application's: returns when that commit is
   * known to have happened, and in a power-loss durability mode it is on the disk.
   *
   * @throws SQLException with SQL state {@code 08007} ("transaction resolution unknown") when the
   *     engine cannot tell whether the commit happened; also when a sync fails
   */
  void afterCommit(Connection connection) throws SQLException;

  /** Registers an action run when the database closes, before its connections go. */
  void beforeClose(Runnable action);

  /**
   * Runs {@code call}, and again while it fails in a way that passes (another process handing the
   * file over, a file busy with another writer), up to the engine's bound. Only for calls that
   * are safe to run again whatever the failed try did: a read, or an idempotent write.
   */
  default <R> R retry(SqlCall<R> call) throws SQLException {
    return retry(call, e -> false, Duration.ZERO);
  }

  /**
   * As {@link #retry(SqlCall)}, also running {@code call} again while it fails with an error
   * {@code alsoRetry} accepts, for up to {@code bound} (or the engine's own bound, if longer)
   * after the first failure.
   */
  <R> R retry(SqlCall<R> call, Predicate<SQLException> alsoRetry, Duration bound)
      throws SQLException;

  /**
   * Called after the stores deleted rows (history retention, pruning): gives the space back where
   * the engine does not do it on its own schedule. Nothing by default.
   *
   * @throws OutboxStorageException when that fails
   */
  default void reclaimSpace() {}

  /**
   * Gives the file's free space back to the file system now, as far as the engine does that on
   * demand.
   *
   * @return bytes the file (with its write-ahead log) shrank by
   * @throws OutboxStorageException when that fails
   */
  default long compactFile() {
    return 0;
  }

  /** The first {@link SQLException} in {@code failure}'s causes that passes, or null. */
  SQLException passingCause(Throwable failure);

  /**
   * A statement's failure as the library reports it: naming the file and the action, {@linkplain
   * OutboxStorageException#retryable() retryable} when it passes.
   */
  OutboxStorageException onStatement(String action, SQLException e);

  /**
   * Runs {@code work} in one new transaction on this database and commits it, then calls {@link
   * #afterCommit}: the application's transaction helper, so that an accept joined to the
   * application's own change (an {@code Outbox.accept(connection, command)} inside {@code work})
   * is durable as the library's own accepts are, with nothing to call by hand. Rolls back when
   * {@code work} throws. Runtime exceptions pass through; checked ones are wrapped in {@link
   * OutboxException}; a database failure is an {@link OutboxStorageException}.
   *
   * @throws OutboxStorageException with a cause in SQL state {@code 08007} when the commit's
   *     outcome is unknown: run idempotent work (an accept with the same command id) again
   */
  default <R> R inTransaction(SqlWork<R> work) {
    try (Connection c = dataSource().getConnection()) {
      c.setAutoCommit(false);
      R result;
      try {
        dialect().beginWrite(c);
        result = work.run(c);
        c.commit();
      } catch (Exception e) {
        try {
          c.rollback();
        } catch (SQLException rollbackFailed) {
          e.addSuppressed(rollbackFailed);
        }
        if (e instanceof RuntimeException runtime) {
          throw runtime;
        }
        if (e instanceof SQLException sql) {
          throw sql;
        }
        throw new OutboxException("transaction work failed: " + e, e);
      }
      afterCommit(c);
      return result;
    } catch (SQLException e) {
      throw onStatement("transaction", e);
    }
  }

  /** A database call that may throw. */
  @FunctionalInterface
  interface SqlCall<R> {
    R call() throws SQLException;
  }

  /** Work inside one transaction. */
  @FunctionalInterface
  interface SqlWork<R> {
    R run(Connection connection) throws Exception;
  }
}
