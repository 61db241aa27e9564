package dev.outboxreplay;

/** What the replayer does with a command accepted under an older session version. */
public enum StaleSessionPolicy {
  /** Keep it queued and do not send it; an operator or the app decides later. The default. */
  HOLD,
  /** End it as rejected with reason {@code stale_session}. */
  REJECT,
  /** Send it under the current session. */
  RESEND
}
