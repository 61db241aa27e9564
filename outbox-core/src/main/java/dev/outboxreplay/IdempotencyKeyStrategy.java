package dev.outboxreplay;

/**
 * Derives the idempotency key of a command once, at accept. The result must be a pure function of
 * its arguments so that the same intent always yields the same key.
 */
@FunctionalInterface
public interface IdempotencyKeyStrategy {
  /** {@code operation:entityKey:commandId}, as recommended by seed 003 section 7.1. */
  IdempotencyKeyStrategy DEFAULT =
      (operation, entityKey, commandId) -> operation + ":" + entityKey + ":" + commandId;

  /**
   * Returns the key text; it is validated by {@link IdempotencyKey} afterwards.
   *
   * @param operation the command's operation
   * @param entityKey the command's ordering group
   * @param commandId the command's id
   */
  String keyFor(String operation, String entityKey, CommandId commandId);
}
