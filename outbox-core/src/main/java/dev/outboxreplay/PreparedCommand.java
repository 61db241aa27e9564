package dev.outboxreplay;

import java.time.Instant;
import java.util.Objects;

/**
 * A validated command ready to be written: identity fixed, payload canonical. Produced by
 * {@link Outbox}; handed to {@link OutboxStore#insert}.
 *
 * @param commandId the command id
 * @param idempotencyKey the key
 * @param operation the operation
 * @param entityKey the ordering group
 * @param payload canonical payload
 * @param sessionVersion the session version current at accept
 * @param acceptedAt the accept time; also the first due time
 */
public record PreparedCommand(
    CommandId commandId, IdempotencyKey idempotencyKey, String operation, String entityKey,
    Payload payload, long sessionVersion, Instant acceptedAt) {
  public PreparedCommand {
    Objects.requireNonNull(commandId, "commandId");
    Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(entityKey, "entityKey");
    Objects.requireNonNull(payload, "payload");
    Objects.requireNonNull(acceptedAt, "acceptedAt");
  }

  /** True when {@code record} holds the same intent: operation, entity and payload bytes. */
  public boolean sameIntentAs(OutboxRecord record) {
    return operation.equals(record.operation()) && entityKey.equals(record.entityKey())
        && payload.sameContentAs(record.payload());
  }
}
