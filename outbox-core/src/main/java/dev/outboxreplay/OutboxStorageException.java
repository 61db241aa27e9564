package dev.outboxreplay;

/**
 * The store could not do what was asked: the database file is locked, corrupt, written by a newer
 * version, unreadable, or a statement failed. The message names the file. A failed write leaves
 * nothing half-written.
 */
public final class OutboxStorageException extends OutboxException {
  private static final long serialVersionUID = 1L;

  public OutboxStorageException(String message) {
    super(message);
  }

  public OutboxStorageException(String message, Throwable cause) {
    super(message, cause);
  }
}
