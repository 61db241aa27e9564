package dev.outboxreplay.receiver;

import java.time.Instant;
import java.util.Optional;

/**
 * The receiver's idempotency records for one node: claims a key for processing, stores the
 * answer in the same transaction as the request's effect, and answers repeats and
 * reconciliation. Several nodes, each with its own store instance and node name, may share one
 * database: a key is processed by one node at a time, and a node's claim lasts a lease, after
 * which another node may take the key over. A node that takes over gets a larger fencing token,
 * and a completion under the older token commits nothing, its effect included, so a request
 * whose node stalled past its lease still takes effect once.
 *
 * <p>Implementations are thread-safe. Methods throw {@link
 * dev.outboxreplay.OutboxStorageException} when the database fails; nothing is half-written.
 *
 * @param <T> the transaction type the handler's effect is written in (JDBC: {@code Connection})
 */
public interface IdempotencyRecordStore<T> {
  /**
   * Claims {@code key} of {@code tenant} for this node: a new started record, a failed one with
   * the same payload restarted, or a started one whose owner's lease expired before {@code now}
   * taken over, each with a lease until {@code now} plus the store's lease and a new fencing
   * token; committed when this returns, so that concurrent requests on any node see it. Of
   * concurrent first claims of one key, on one node or several, exactly one is {@link
   * Claim.Owned}.
   *
   * @param payloadHash SHA-256 of the request body (32 bytes)
   * @param expiresAt when a finished record may be pruned (the key's retention)
   */
  Claim claim(String tenant, String key, String operation, byte[] payloadHash, Instant now,
      Instant expiresAt);

  /**
   * Runs {@code work} (the handler: the request's effect) in one transaction with storing its
   * answer as the key's committed record, and commits both, or neither.
   *
   * @return the answer stored
   * @throws KeyTakenOverException when another node took the key over (this
   *     claim's lease expired): nothing committed, the effect included
   * @throws Exception what {@code work} threw, after rolling everything back
   */
  StoredAnswer complete(Claim.Owned claim, Work<T> work, Instant now) throws Exception;

  /**
   * Records that the handler failed and nothing took effect; a repeat with the same payload is
   * processed again. Does nothing when another node took the key over.
   *
   * @param error what failed, without request data (the exception's class, say)
   */
  void fail(Claim.Owned claim, String error, Instant now);

  /** The record of {@code key}, for reconciliation; empty when never seen or pruned. */
  Optional<IdempotencyRecord> find(String tenant, String key);

  /**
   * For a node that restarted under its own name: its started records cannot be running
   * anywhere, so their leases end now and a retry is processed at once. Records of other nodes
   * are left alone.
   *
   * @return how many records were released
   */
  int releaseOwnStarted(Instant now);

  /**
   * Deletes up to {@code batch} records whose key expired before {@code now}: finished ones,
   * and started ones whose lease also expired.
   *
   * @return how many were deleted
   */
  int pruneExpired(Instant now, int batch);

  /** How many records are stored, for tests and operators. */
  long count();

  /** The request's effect, run inside the transaction that stores its answer. */
  @FunctionalInterface
  interface Work<T> {
    StoredAnswer run(T transaction) throws Exception;
  }
}
