package dev.outboxreplay.sqlite;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.JdbcOutboxStore;

/**
 * The outbox store on a {@link SqliteDatabase}: the shared JDBC store ({@link JdbcOutboxStore})
 * with SQLite's dialect. Accepts from concurrent threads share commits; claims take rows with
 * compare-and-set updates on (id, status, fencing token). Table layout: {@code
 * docs/table-layout.md}.
 *
 * <p>Thread-safe. Closing the store does not close the database it was created on.
 */
public final class SqliteOutboxStore extends JdbcOutboxStore {
  private final SqliteDatabase database;

  private SqliteOutboxStore(SqliteDatabase database) {
    super(database);
    this.database = database;
  }

  /**
   * Creates the outbox tables in {@code database} if needed, upgrading older layouts.
   *
   * @throws OutboxStorageException when the file's outbox schema is newer than this release
   */
  public static SqliteOutboxStore create(SqliteDatabase database) {
    return create(database, d -> new SqliteOutboxStore(database));
  }

  /**
   * Opens the outbox that {@code database} already holds, and never adds one to a file that has
   * none; see {@link JdbcOutboxStore#openExisting(dev.outboxreplay.jdbc.JdbcDatabase)}.
   *
   * @throws OutboxStorageException (not retryable) naming the file when it holds no outbox, or
   *     one this release cannot use as it is
   */
  public static SqliteOutboxStore openExisting(SqliteDatabase database) {
    return openExisting(database, d -> new SqliteOutboxStore(database));
  }

  /** The database this store writes to. */
  @Override
  public SqliteDatabase database() {
    return database;
  }
}
