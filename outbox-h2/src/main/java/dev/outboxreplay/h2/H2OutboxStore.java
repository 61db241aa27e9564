package dev.outboxreplay.h2;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.JdbcOutboxStore;

/**
 * The outbox store on an {@link H2Database}: the shared JDBC store ({@link JdbcOutboxStore}) with
 * H2's dialect. Accepts from concurrent threads share commits; claims take rows with
 * compare-and-set updates on (id, status, fencing token), so replayers in several threads or
 * processes never hold the same row at once. Table layout: {@code docs/table-layout.md}.
 *
 * <p>Thread-safe. Closing the store does not close the database it was created on.
 */
public final class H2OutboxStore extends JdbcOutboxStore {
  private final H2Database database;

  private H2OutboxStore(H2Database database) {
    super(database);
    this.database = database;
  }

  /**
   * Creates the outbox tables in {@code database} if needed, upgrading older layouts.
   *
   * @throws OutboxStorageException when the file's outbox schema is newer than this release
   */
  public static H2OutboxStore create(H2Database database) {
    return create(database, d -> new H2OutboxStore(database));
  }

  /**
   * Opens the outbox that {@code database} already holds; see {@link
   * JdbcOutboxStore#openExisting(dev.outboxreplay.jdbc.JdbcDatabase)}.
   *
   * @throws OutboxStorageException (not retryable) naming the file when it holds no outbox, or
   *     one this release cannot use as it is
   */
  public static H2OutboxStore openExisting(H2Database database) {
    return openExisting(database, d -> new H2OutboxStore(database));
  }

  /** The database this store writes to. */
  @Override
  public H2Database database() {
    return database;
  }
}
