package dev.outboxreplay.internal.replay;

import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import java.util.Objects;

/**
 * The one decision about a held row: what to write ({@code outcome}, whose reason the audit and
 * the listener share) and what else it means for replay ({@code effect}).
 *
 * @param outcome the row's next status, reason, attempt count, due time, error and response
 * @param effect what the replayer does besides writing it
 */
public record Decision(Outcome outcome, Effect effect) {
  public Decision {
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(effect, "effect");
  }

  /** What a decision means for replay as a whole. */
  public enum Effect {
    /** Nothing beyond the write. */
    NONE,
    /** The command gave up without a refusal from the receiver: the listener's onPoison too. */
    POISON,
    /** The session's credentials were refused: pause until they change. */
    PAUSE_FOR_CREDENTIALS,
    /** The request never left: hold replay until the network is back. */
    OFFLINE
  }

  /** An ack: the response applier runs in the transaction that writes it. */
  public boolean applies() {
    return outcome.status() == Status.ACKED;
  }
}
