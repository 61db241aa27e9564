package dev.outboxreplay.h2;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.JdbcInboxStore;

/**
 * The processed inbox on an {@link H2Database}: the shared JDBC store ({@link JdbcInboxStore})
 * with H2's dialect. Layout: {@code docs/table-layout.md}. Thread-safe.
 */
public final class H2InboxStore extends JdbcInboxStore {
  private H2InboxStore(H2Database database) {
    super(database);
  }

  /**
   * Creates the inbox table in {@code database} if needed.
   *
   * @throws OutboxStorageException when the file's inbox schema is newer than this release
   */
  public static H2InboxStore create(H2Database database) {
    return create(database, d -> new H2InboxStore(database));
  }
}
