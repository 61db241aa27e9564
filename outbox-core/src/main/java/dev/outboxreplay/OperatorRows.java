package dev.outboxreplay;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What health checks, an application's problem list and the operator tools read and repair:
 * rows by id, key and status, counts, the oldest open command, a command's audit trail, and the
 * requeue of a conflict or rejected command (with its check for a later acked command of the
 * entity). Part of {@link OutboxStore}.
 */
public interface OperatorRows {

  /**
   * The earliest command of {@code id}'s entity accepted after it that is acked, if any:
   * requeueing {@code id} then would deliver it after a later command of its entity.
   */
  Optional<OutboxRecord> firstAckedAfter(CommandId id);

  /**
   * Operator action: puts a conflict or rejected row back to queued with attempt 0, due at
   * {@code now}. The same id and key are kept.
   *
   * @throws IllegalStateException when the row is in another status
   * @throws java.util.NoSuchElementException when there is no such row
   */
  OutboxRecord requeue(CommandId id, Instant now);

  /**
   * The audit trail of one command: every status change after accept, oldest first, with the
   * token and reason it was made with.
   */
  List<OutboxStore.AuditEntry> auditTrail(CommandId id);

  /** The row with this id, if any. */
  Optional<OutboxRecord> find(CommandId id);

  /** The row with this key, if any. */
  Optional<OutboxRecord> findByKey(IdempotencyKey key);

  /** Rows in {@code status}, in accept order, at most {@code limit}. */
  List<OutboxRecord> list(Status status, int limit);

  /** Number of rows per status; every status is present, zero included. */
  Map<Status, Long> countByStatus();

  /**
   * When the oldest command that is not yet acked, conflict or rejected was accepted; empty when
   * none is open, or when the store cannot answer cheaply (the default).
   */
  default Optional<Instant> oldestOpenAcceptedAt() {
    return Optional.empty();
  }
}
