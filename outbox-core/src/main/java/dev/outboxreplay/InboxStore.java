package dev.outboxreplay;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Durable processed-inbox rows, for {@link Inbox}. Implementations are thread-safe and safe to
 * share between processes that open the same database.
 *
 * @param <T> the store's transaction handle handed to the consumer
 */
public interface InboxStore<T> extends AutoCloseable {

  /** Work run inside the consume transaction; returns the staged result. */
  @FunctionalInterface
  interface ConsumeWork<T> {
    byte[] run(T transaction) throws Exception;
  }

  /** The row for this message, if any. A plain read: no lock, no write. */
  Optional<InboxEntry> find(String scope, String messageId);

  /**
   * In one new transaction: reserves (scope, message id), runs {@code work} with the transaction,
   * stores its result as staged and commits durably. A concurrent caller with the same message
   * waits for that transaction and then gets empty without running its work.
   *
   * @return the row as this call committed it (staged, with the result), or empty when the
   *     message was already reserved (work not run)
   * @throws InboxConsumerException when {@code work} threw; everything was rolled back
   */
  Optional<InboxEntry> consumeOnce(InboxMessage message, Instant now, ConsumeWork<T> work);

  /** Marks a staged row projected and drops its staged result, leaving a tombstone. Idempotent. */
  void markProjected(String scope, String messageId, Instant now);

  /**
   * Moves a row that is staged and whose staged result is missing to integrity failure.
   *
   * @return true when this call moved it; false when the row is in another state or has a result
   */
  boolean markIntegrityFailure(String scope, String messageId, Instant now);

  /**
   * Records that (scope, message id), already in the inbox, was delivered again with bytes whose
   * SHA-256 differs from the consumed message's. Durable when it returns. Changes nothing else.
   */
  void recordMismatch(String scope, String messageId, Instant now);

  /** Messages redelivered with other bytes, most recent first, at most {@code limit}. */
  List<Mismatch> listMismatches(int limit);

  /**
   * A message id delivered again with other bytes.
   *
   * @param scope message scope
   * @param messageId message id (hash it before showing it anywhere)
   * @param deliveries how many deliveries had other bytes
   * @param lastAt when the latest of them arrived
   */
  record Mismatch(String scope, String messageId, int deliveries, Instant lastAt) {}

  /** Rows in {@code state}, oldest consumed first, at most {@code limit}. */
  List<InboxEntry> list(InboxEntry.State state, int limit);

  /**
   * Deletes tombstones projected before {@code projectedBefore}. After this, a redelivery of one
   * of those messages is consumed again: only call it with a cut-off older than any possible
   * redelivery.
   *
   * @return how many tombstones were deleted
   */
  int pruneTombstones(Instant projectedBefore);

  @Override
  void close();
}
