package dev.outboxreplay;

import java.time.Instant;

/**
 * History retention: pruning the audit trail, turning long-ended commands into tombstones and
 * deleting old tombstones. The {@link Replayer} runs it on its schedule and {@code outbox compact}
 * on demand; the cutoffs are theirs to decide. Part of {@link OutboxStore}.
 */
public interface RetentionRows {

  /**
   * Deletes audit entries older than {@code before}, in the order they were written: pruning stops
   * at the first entry written at or after {@code before}. An entry written after it with an
   * older time (a process whose clock was behind) stays until a later prune reaches it.
   *
   * @return how many entries were deleted
   */
  int pruneAudit(Instant before);

  /**
   * History retention, first step: every acked, conflict or rejected command that ended (its
   * last status change) before {@code endedBefore} becomes a tombstone. A tombstone keeps what
   * deduplication, the audit and support need: id, idempotency key, operation, entity, the
   * payload's SHA-256, status, attempt count, times, the response status and the last error code.
   * It drops the payload bytes ({@link Payload#retained()} is then false), the response body and
   * the last error message. Open commands are never touched; an accept with a tombstone's key
   * still returns the tombstone (or refuses other content); a tombstone cannot be requeued.
   * Works in bounded transactions, so accepts never wait long; durable when it returns.
   *
   * @param now recorded as the time the command became a tombstone
   * @return how many commands became tombstones
   */
  int tombstoneEnded(Instant endedBefore, Instant now);

  /**
   * History retention, second step: deletes the tombstones of commands that ended before
   * {@code endedBefore}, with their audit entries. After this an accept with a deleted command's
   * idempotency key is a new command: call it only for commands older than the receiver's key
   * retention (a receiver would by then run a resent key again anyway). Commands that are not
   * tombstones yet are never deleted. Durable when it returns.
   *
   * @return how many tombstones were deleted
   */
  int deleteTombstones(Instant endedBefore);
}
