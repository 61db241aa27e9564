package dev.outboxreplay;

/**
 * The same command id or idempotency key was accepted before with a different operation, entity
 * or payload. Nothing was written by the call that threw.
 */
public final class IdempotencyConflictException extends OutboxException {
  private static final long serialVersionUID = 1L;
  private final transient CommandId commandId;
  private final transient IdempotencyKey idempotencyKey;
  private final transient CommandId existingCommandId;

  public IdempotencyConflictException(
      CommandId commandId, IdempotencyKey idempotencyKey, CommandId existingCommandId) {
    super("command " + commandId + " with idempotency key '" + idempotencyKey
        + "' conflicts with already accepted command " + existingCommandId
        + ": same id or key, different operation, entity or payload; nothing was written");
    this.commandId = commandId;
    this.idempotencyKey = idempotencyKey;
    this.existingCommandId = existingCommandId;
  }

  /** The id of the command that was refused. */
  public CommandId commandId() {
    return commandId;
  }

  /** The key of the command that was refused. */
  public IdempotencyKey idempotencyKey() {
    return idempotencyKey;
  }

  /** The id of the command already stored under the same id or key. */
  public CommandId existingCommandId() {
    return existingCommandId;
  }
}
