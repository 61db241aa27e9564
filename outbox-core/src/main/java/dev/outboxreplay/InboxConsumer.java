package dev.outboxreplay;

/**
 * The application's irreversible step for an incoming message (for example: decrypt, which
 * advances a ratchet). The {@link Inbox} is its only caller and calls it at most once per
 * (scope, message id) whose effects commit.
 *
 * <p>It runs inside the inbox's database transaction and must keep its own state (the ratchet)
 * in that same database through {@code transaction}, without committing, rolling back or closing
 * it: its changes, the inbox row and the staged result then commit together, or not at all.
 *
 * @param <T> the store's transaction handle (for H2: {@code java.sql.Connection})
 */
@FunctionalInterface
public interface InboxConsumer<T> {
  /**
   * Consumes {@code message} and returns the result to stage for projection (for example the
   * plaintext). Throwing rolls everything back: the message is not marked processed and may be
   * received again.
   *
   * @return the staged result; never null (use an empty array for "nothing to project")
   */
  byte[] consume(T transaction, InboxMessage message) throws Exception;
}
