package dev.outboxreplay;

import java.time.Instant;

/**
 * One outbox row as read from a store: immutable snapshot, never updated in place.
 *
 * @param commandId stable command id
 * @param idempotencyKey stable idempotency key
 * @param operation server operation
 * @param entityKey ordering group
 * @param payload canonical payload bytes and hash
 * @param status current status
 * @param attempt attempts that counted towards the retry limit
 * @param nextAttemptAt earliest time the row may be claimed again
 * @param claimOwner owner of the current claim, or null
 * @param claimedFrom status the row had when first claimed (unknown means: reconcile first), or
 *     null when not claimed
 * @param fencingToken token of the latest claim; 0 before the first
 * @param leaseExpiresAt end of the current lease, or null
 * @param sessionVersion session version at accept
 * @param lastError last recorded error, or null
 * @param response the server's answer on a finished row, or null
 * @param createdAt accept time
 * @param updatedAt time of the last change
 * @param schemaVersion row format version
 * @param acceptSequence the store's accept order (commit order), used for per-entity order
 * @param firstSentAt when the first attempt that may have reached the receiver was recorded, or
 *     null while none may have: max age counts from here, never from accept
 */
public record OutboxRecord(
    CommandId commandId,
    IdempotencyKey idempotencyKey,
    String operation,
    String entityKey,
    Payload payload,
    Status status,
    int attempt,
    Instant nextAttemptAt,
    String claimOwner,
    Status claimedFrom,
    long fencingToken,
    Instant leaseExpiresAt,
    long sessionVersion,
    ErrorInfo lastError,
    StoredResponse response,
    Instant createdAt,
    Instant updatedAt,
    int schemaVersion,
    long acceptSequence,
    Instant firstSentAt) {}
