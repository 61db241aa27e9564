package dev.outboxreplay.internal.replay;

/**
 * What a row just claimed needs.
 *
 * @param next the next step
 * @param decision what to write when {@code next} is {@link Next#RECORD}, else null
 */
public record ClaimDecision(Next next, Decision decision) {
  static final ClaimDecision SEND = new ClaimDecision(Next.SEND, null);
  static final ClaimDecision RECONCILE = new ClaimDecision(Next.RECONCILE, null);

  /** The next step for a claimed row. */
  public enum Next {
    /** Mark it sending and send it. */
    SEND,
    /** Its last attempt may have reached the receiver: ask the receiver first, else resend. */
    RECONCILE,
    /** Settle it without sending (held, stale session, poison): write {@code decision}. */
    RECORD
  }

  static ClaimDecision record(Decision decision) {
    return new ClaimDecision(Next.RECORD, decision);
  }
}
