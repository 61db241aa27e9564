package dev.outboxreplay;

/**
 * Applies a confirmed server answer to local state. It runs in the same transaction that marks
 * the command acked, so both commit or neither; it must not commit, roll back or close
 * {@code transaction}. It runs only when the session fence admits the answer.
 *
 * <p>The replayer records several answers in one transaction when they arrive together; if any
 * part of it fails, all of it rolls back and each answer is recorded again in its own
 * transaction. An applier may therefore be called again for an answer whose earlier call was
 * rolled back: it must keep its effects inside {@code transaction}. It is called on the thread
 * that runs the pass (the replayer's pass thread, or the caller of {@link Replayer#runPass()}),
 * never concurrently with itself: sender threads only do network I/O.
 *
 * @param <T> the store's transaction handle (for H2: {@code java.sql.Connection})
 */
@FunctionalInterface
public interface ResponseApplier<T> {
  /** Does nothing: for commands whose answer carries nothing to apply. */
  static <T> ResponseApplier<T> none() {
    return (transaction, command, response) -> { };
  }

  /**
   * Applies {@code response} to local state. Throwing rolls back the ack as well: the row then
   * becomes unknown ({@link Reason#APPLY_FAILED}) and the receiver's stored answer is fetched
   * again later, by reconciliation or a resend with the same key.
   *
   * @param response the receiver's answer; null when the effect is confirmed but its answer is
   *     not available: the receiver refused a resend as a repeat ({@link
   *     Reason#ALREADY_APPLIED}), or the answer was longer than the transport keeps ({@link
   *     Reason#ACKED_WITHOUT_ANSWER})
   */
  void apply(T transaction, OutboxRecord command, StoredResponse response) throws Exception;
}
