package dev.outboxreplay;

import java.util.Objects;

/**
 * An intent handed to {@link Outbox#accept}: what to do ({@code operation}), to which ordering
 * group ({@code entityKey}), and the JSON payload. A command id and idempotency key may be given
 * when the caller already has them (for example to re-accept the same intent after a restart);
 * otherwise the outbox assigns them once.
 *
 * <p>Validation happens at accept, so a bad command fails there with
 * {@link InvalidCommandException} and nothing is written.
 *
 * @param operation the server operation, also the default route segment; an
 *     {@link OperationName} (one URL path segment, e.g. {@code note.put})
 * @param entityKey the ordering group: commands of one key are sent in accept order; non-blank
 * @param payload a Jackson-serializable value, or a {@link JsonText} holding JSON text
 * @param commandId a caller-chosen id, or null to have one assigned
 * @param idempotencyKey a caller-chosen key, or null to derive it with the outbox's strategy
 */
public record OutboxCommand(
    String operation, String entityKey, Object payload, CommandId commandId,
    IdempotencyKey idempotencyKey) {

  /** A command whose id and key the outbox assigns. */
  public static OutboxCommand of(String operation, String entityKey, Object payload) {
    return new OutboxCommand(operation, entityKey, payload, null, null);
  }

  /** A command whose payload is JSON text, parsed and canonicalized at accept. */
  public static OutboxCommand ofJson(String operation, String entityKey, String json) {
    return of(operation, entityKey, new JsonText(json));
  }

  /** This command with a caller-chosen id (for idempotent re-accept). */
  public OutboxCommand withCommandId(CommandId id) {
    return new OutboxCommand(operation, entityKey, payload, Objects.requireNonNull(id, "id"),
        idempotencyKey);
  }

  /** This command with a caller-chosen idempotency key instead of the derived one. */
  public OutboxCommand withIdempotencyKey(IdempotencyKey key) {
    return new OutboxCommand(operation, entityKey, payload, commandId,
        Objects.requireNonNull(key, "key"));
  }

  /** JSON text given as a payload; parsed strictly (duplicate keys are an error). */
  public record JsonText(String json) {
    public JsonText {
      Objects.requireNonNull(json, "json == null");
    }
  }
}
