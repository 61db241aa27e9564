package dev.outboxreplay;

/**
 * The application's {@link InboxConsumer} failed (for example: the ciphertext did not
 * authenticate). Everything it did was rolled back; the message is not marked processed and a
 * later delivery may be consumed.
 */
public final class InboxConsumerException extends OutboxException {
  private static final long serialVersionUID = 1L;

  public InboxConsumerException(String scope, String messageId, Throwable cause) {
    super("inbox consumer failed for message '" + messageId + "' in scope '" + scope
        + "'; rolled back, not marked processed: " + cause, cause);
  }
}
