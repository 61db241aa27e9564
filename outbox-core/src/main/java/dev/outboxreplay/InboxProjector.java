package dev.outboxreplay;

/**
 * Writes a consumed message's staged result into the recoverable store (the user-visible message
 * history, a separate database, a callback). Called after the consume transaction committed, and
 * again after a crash until the row is marked projected: it must be idempotent by
 * ({@code scope}, {@code messageId}), so a replay never creates a second message.
 */
@FunctionalInterface
public interface InboxProjector {
  /**
   * Projects {@code stagedResult}; throwing leaves the row staged for
   * {@link Inbox#recoverPending}.
   */
  void project(String scope, String messageId, byte[] stagedResult) throws Exception;
}
