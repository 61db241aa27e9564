package dev.outboxreplay;

/**
 * The store could not do what was asked. The message names the file. A failed write leaves
 * nothing half-written. Two kinds, told apart by {@link #retryable()}:
 *
 * <ul>
 *   <li><b>Retryable</b>: a passing condition. Another process was handing the shared file over
 *       (the one serving it closed or died), processes raced to open the file, a row lock was
 *       not released in time, the pool had no connection free. The same call may succeed
 *       shortly; the library has already retried where that is safe.
 *   <li><b>Fatal</b>: retrying will not help. The file is corrupt, not an outbox file, written by
 *       a newer release or an incompatible H2, missing, or not accessible; a stored value is
 *       unreadable. Stop and tell the user or an operator.
 * </ul>
 */
public final class OutboxStorageException extends OutboxException {
  private static final long serialVersionUID = 1L;
  private final boolean retryable;

  /** A fatal failure. */
  public OutboxStorageException(String message) {
    this(message, null, false);
  }

  /** A fatal failure. */
  public OutboxStorageException(String message, Throwable cause) {
    this(message, cause, false);
  }

  public OutboxStorageException(String message, Throwable cause, boolean retryable) {
    super(message, cause);
    this.retryable = retryable;
  }

  /** True when the same call may succeed if made again shortly; false when it will not. */
  public boolean retryable() {
    return retryable;
  }
}
