package dev.outboxreplay.sqlite;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.JdbcInboxStore;

/**
 * The processed inbox on a {@link SqliteDatabase}: the shared JDBC store ({@link JdbcInboxStore})
 * with SQLite's dialect. A second receiver of the same message waits for the first one's write
 * lock and then finds its row. Layout: {@code docs/table-layout.md}. Thread-safe.
 */
public final class SqliteInboxStore extends JdbcInboxStore {
  private SqliteInboxStore(SqliteDatabase database) {
    super(database);
  }

  /**
   * Creates the inbox table in {@code database} if needed.
   *
   * @throws OutboxStorageException when the file's inbox schema is newer than this release
   */
  public static SqliteInboxStore create(SqliteDatabase database) {
    return create(database, d -> new SqliteInboxStore(database));
  }
}
