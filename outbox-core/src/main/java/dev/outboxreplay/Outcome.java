package dev.outboxreplay;

import java.time.Instant;
import java.util.Objects;

/**
 * What happened to a claimed or sending row, as the replayer records it with
 * {@link OutboxStore#complete}. The store writes {@code reason} to the audit trail; the replayer
 * reports the same reason to its {@link OutboxListener}.
 *
 * @param status the status to move to
 * @param nextAttemptAt when the row is due again (ignored for terminal statuses)
 * @param error the error to record, or null
 * @param response the server answer to keep, or null
 * @param countsAsAttempt whether the row's attempt count goes up by one
 * @param reason why; if it {@linkplain Reason#mayHaveReachedReceiver() may have reached the
 *     receiver}, the store starts the row's {@link OutboxRecord#firstSentAt()} if not yet set
 */
public record Outcome(
    Status status, Instant nextAttemptAt, ErrorInfo error, StoredResponse response,
    boolean countsAsAttempt, Reason reason) {
  public Outcome {
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(reason, "reason");
    if (!status.isTerminal()) {
      Objects.requireNonNull(nextAttemptAt, "nextAttemptAt is required for " + status.wireName());
    }
  }

  /** The server confirmed the effect. */
  public static Outcome acked(StoredResponse response) {
    return new Outcome(Status.ACKED, null, null, response, true, Reason.ACKED);
  }

  /** Known not to have taken effect; retry at {@code nextAttemptAt}. */
  public static Outcome retryable(Instant nextAttemptAt, ErrorInfo error) {
    return new Outcome(Status.RETRYABLE_FAILED, nextAttemptAt, error, null, true,
        Reason.RETRYABLE_RESPONSE);
  }

  /** May have taken effect; reconcile or resend with the same key at {@code nextAttemptAt}. */
  public static Outcome unknown(Instant nextAttemptAt, ErrorInfo error) {
    return new Outcome(Status.UNKNOWN, nextAttemptAt, error, null, true, Reason.OUTCOME_UNKNOWN);
  }

  /** Refused as conflicting; terminal. */
  public static Outcome conflict(ErrorInfo error, StoredResponse response) {
    return new Outcome(Status.CONFLICT, null, error, response, true, Reason.CONFLICT);
  }

  /** Refused for good; terminal. */
  public static Outcome rejected(ErrorInfo error, StoredResponse response) {
    return new Outcome(Status.REJECTED, null, error, response, true,
        Reason.REJECTED_BY_RECEIVER);
  }

  /** The same outcome without raising the attempt count (for example a 401 pause). */
  public Outcome notCountedAsAttempt() {
    return new Outcome(status, nextAttemptAt, error, response, false, reason);
  }

  /** The same outcome recorded under {@code reason}. */
  public Outcome withReason(Reason reason) {
    return new Outcome(status, nextAttemptAt, error, response, countsAsAttempt, reason);
  }
}
