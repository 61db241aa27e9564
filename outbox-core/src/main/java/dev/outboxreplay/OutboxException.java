package dev.outboxreplay;

/** Base of the outbox's own unchecked exceptions. */
public class OutboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public OutboxException(String message) {
    super(message);
  }

  public OutboxException(String message, Throwable cause) {
    super(message, cause);
  }
}
