package dev.outboxreplay;

import java.time.Instant;

/**
 * A processed-inbox row: proof that a message crossed the irreversible step.
 *
 * @param scope message scope
 * @param messageId message id
 * @param state where the row is
 * @param stagedResult the consumer's result until projected, then null; null while staged means
 *     an integrity failure
 * @param messageSha256 SHA-256 of the bytes that were consumed
 * @param consumedAt when the consume transaction committed
 * @param projectedAt when projection was recorded, or null
 */
public record InboxEntry(
    String scope, String messageId, State state, byte[] stagedResult, byte[] messageSha256,
    Instant consumedAt, Instant projectedAt) {

  /** Life of an inbox row. None of them lets the consumer run again. */
  public enum State {
    /** Consumed and committed; the staged result waits to be projected. */
    STAGED,
    /** Projected; the staged result is pruned and the row is a tombstone. */
    PROJECTED,
    /**
     * Consumed, not projected, and the staged result is missing: it cannot be projected and must
     * never be consumed again. Terminal; surfaced by {@link Inbox#integrityFailures()}.
     */
    INTEGRITY_FAILURE
  }
}
