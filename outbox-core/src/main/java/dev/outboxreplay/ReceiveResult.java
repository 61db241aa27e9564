package dev.outboxreplay;

/**
 * What {@link Inbox#receive} did.
 *
 * @param outcome whether the consumer ran for this delivery
 * @param projected whether the message is projected into the recoverable store now
 */
public record ReceiveResult(Outcome outcome, boolean projected) {

  /** Whether this delivery ran the consumer. */
  public enum Outcome {
    /** First delivery: the consumer ran once and its effects committed. */
    CONSUMED,
    /** Already consumed before: the consumer did not run. */
    DUPLICATE,
    /**
     * This message id was consumed before with other bytes (a sender bug or tampering): the
     * consumer did not run, and the delivery is recorded for {@link Inbox#mismatches()}. The id,
     * not the bytes, is the message's identity; the first consumed bytes stand.
     */
    DUPLICATE_MISMATCH,
    /** Already consumed, but the staged result is missing: never consumed again, not projected. */
    INTEGRITY_FAILURE
  }
}
