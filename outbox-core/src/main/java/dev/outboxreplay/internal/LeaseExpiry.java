package dev.outboxreplay.internal;

import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.Reason;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import java.time.Instant;
import java.util.Objects;

/**
 * What a row whose lease ran out becomes: the decision behind {@code
 * OutboxStore#recoverExpiredLeases}, made here so that every store writes the same thing (a
 * store only finds the expired rows and writes this, fenced by the token it read). Pure: no I/O.
 *
 * <ul>
 *   <li>A <b>sending</b> row becomes {@code unknown}: its request may have reached the receiver,
 *       so it counts as an attempt, starts the max age if nothing had ({@code first_sent_at}),
 *       records why, and is due at once (to be reconciled by its key before any resend).
 *   <li>A <b>claimed</b> row was never sent: it goes back to the status it was claimed from
 *       ({@code queued}, {@code retryable_failed} or {@code unknown}), due at once, with nothing
 *       else changed: not an attempt, its last error kept.
 * </ul>
 *
 * @param next the status the row moves to
 * @param reason the audited reason
 * @param countsAsAttempt whether {@code attempt} grows by one
 * @param mayHaveReachedReceiver whether the max age starts now if it has not started
 * @param error the error to record, or null to keep the row's last error
 * @param dueAt when the row is due next
 */
public record LeaseExpiry(Status next, Reason reason, boolean countsAsAttempt,
    boolean mayHaveReachedReceiver, ErrorInfo error, Instant dueAt) {

  /** The message recorded on a sending row whose sender stopped. */
  public static final String SENDING_MESSAGE = "the sender stopped before recording an outcome; "
      + "the request may have reached the server";

  public LeaseExpiry {
    Objects.requireNonNull(next, "next");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(dueAt, "dueAt");
  }

  /**
   * The decision for a row held in {@code held} (claimed from {@code claimedFrom}, null when not
   * claimed) whose lease ended at or before {@code now}.
   *
   * @throws IllegalArgumentException when {@code held} is not a status with a lease
   * @throws IllegalStateException when a claimed row names no status it may go back to
   */
  public static LeaseExpiry of(Status held, Status claimedFrom, Instant now) {
    Objects.requireNonNull(held, "held");
    Objects.requireNonNull(now, "now");
    LeaseExpiry decision = switch (held) {
      case SENDING -> new LeaseExpiry(Status.UNKNOWN, Reason.LEASE_EXPIRED_WHILE_SENDING, true,
          true, new ErrorInfo(Reason.LEASE_EXPIRED_WHILE_SENDING.wireName(), SENDING_MESSAGE,
              now), now);
      case CLAIMED -> {
        if (claimedFrom == null || claimedFrom == Status.CLAIMED
            || !StateMachine.isAllowed(Status.CLAIMED, claimedFrom)
            || !StateMachine.isAllowed(claimedFrom, Status.CLAIMED)) {
          throw new IllegalStateException("a claimed row records no status it was claimed from "
              + "that it may go back to: " + claimedFrom);
        }
        yield new LeaseExpiry(claimedFrom, Reason.LEASE_EXPIRED_WHILE_CLAIMED, false, false, null,
            now);
      }
      default -> throw new IllegalArgumentException("no lease in status " + held);
    };
    StateMachine.requireAllowed(held, decision.next());
    return decision;
  }
}
