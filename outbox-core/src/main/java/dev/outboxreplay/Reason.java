package dev.outboxreplay;

import java.util.Locale;

/**
 * Why a row changed status, or why replay paused: the one vocabulary shared by the audit trail,
 * the {@link OutboxListener}, the command-line tool and the docs. The {@linkplain #wireName() wire
 * name} is what the store writes and the tool prints; it never changes meaning.
 *
 * <p>The detail of an attempt (for example {@code http_503} or {@code connect_failed}) is the
 * row's {@linkplain OutboxRecord#lastError() last error code}, not a reason.
 */
public enum Reason {
  /** Taken under a lease by a replayer. */
  CLAIMED(false),
  /** Marked sending: from here on the request may reach the receiver. */
  SENDING(false),
  /** The receiver confirmed the effect (2xx). */
  ACKED(true),
  /**
   * The receiver confirmed the effect (2xx) with an answer too large to keep: acked, and the
   * response applier got no answer.
   */
  ACKED_WITHOUT_ANSWER(true),
  /**
   * A resend that a receiver refused because it had seen the key before ({@link
   * TransportResult.Kind#KEY_ALREADY_USED}), after an earlier attempt that may have reached it:
   * that attempt took effect. Acked; the response applier got no answer.
   */
  ALREADY_APPLIED(true),
  /** The receiver's reconciliation endpoint said the key was committed; applied without resend. */
  RECONCILED_COMMITTED(true),
  /** The receiver's reconciliation endpoint said the key is still being processed. */
  RECONCILED_PROCESSING(true),
  /** The request provably never left (connection refused, unknown host, no route). */
  NOT_SENT_OFFLINE(false),
  /** Marked sending, but replay paused before the request was made. */
  NOT_SENT_REPLAY_PAUSED(false),
  /** Marked sending, but half its lease passed before a sender was free; claimed afresh. */
  NOT_SENT_LEASE_HALF_SPENT(false),
  /** Marked sending, but the pass stopped (closing) before the request was made. */
  NOT_SENT_PASS_STOPPED(false),
  /**
   * Marked sending while the command before it in its entity was in flight, and given back
   * unsent because that one did not end (it is retried first).
   */
  NOT_SENT_EARLIER_COMMAND_OPEN(false),
  /** Claimed, then given back unsent because replay paused. */
  REPLAY_PAUSED(false),
  /** The receiver answered that it did not take effect and may be retried (5xx, 429, 408...). */
  RETRYABLE_RESPONSE(true),
  /** No answer after the request started (timeout, reset): it may have taken effect. */
  OUTCOME_UNKNOWN(true),
  /** The receiver is still processing this key (409 in progress); same key later. */
  IN_PROGRESS(true),
  /** The receiver refused it as conflicting (business 409, or key reuse 422). Terminal. */
  CONFLICT(true),
  /** The receiver refused it for good (another 4xx). Terminal. */
  REJECTED_BY_RECEIVER(true),
  /** The receiver forbade this command (403), for example a revoked permission. Terminal. */
  FORBIDDEN(true),
  /** The receiver refused the session's credentials (401); replay pauses until they change. */
  CREDENTIALS_REFUSED(true),
  /** The session was revoked; replay pauses. */
  SESSION_REVOKED(false),
  /** Offline: a request could not leave; replay holds until the network is back. */
  OFFLINE(false),
  /** The answer arrived after the session changed; not applied, retried. */
  STALE_RESPONSE(true),
  /** The response applier threw; nothing applied, retried. */
  APPLY_FAILED(true),
  /**
   * Acked, but not applied: the end of the command before it in its entity was not recorded (its
   * response applier threw, or its lease was lost), and responses are applied in entity order.
   * The stored response is fetched again once that command has ended.
   */
  EARLIER_COMMAND_UNSETTLED(true),
  /** Accepted under an older session version; held ({@link StaleSessionPolicy#HOLD}). */
  HELD_STALE_SESSION(false),
  /** Accepted under an older session version; ended ({@link StaleSessionPolicy#REJECT}). */
  STALE_SESSION(false),
  /** Poison: ran out of attempts, each known not to have taken effect. Terminal. */
  POISON_MAX_ATTEMPTS(false),
  /** Poison: its first attempt that may have reached the receiver is older than max age. */
  POISON_MAX_AGE(false),
  /**
   * Needs attention: the outcome is still unknown and the receiver's key retention has passed, so
   * a resend could take effect twice. Terminal; check the receiver before requeueing.
   */
  UNRESOLVED_KEY_EXPIRED(false),
  /** A sending row's lease ended before its outcome was recorded: it becomes unknown. */
  LEASE_EXPIRED_WHILE_SENDING(true),
  /** A claimed row's lease ended before it was sent: it goes back to where it was. */
  LEASE_EXPIRED_WHILE_CLAIMED(false),
  /** Given back unsent through {@link OutboxStore#release}. */
  RELEASED(false),
  /** An operator put a conflict or rejected row back to queued. */
  OPERATOR_REQUEUE(false),
  /** Written by an older release under a name this one no longer uses. */
  LEGACY(false);

  private final boolean mayHaveReachedReceiver;
  private final String wireName = name().toLowerCase(Locale.ROOT);

  Reason(boolean mayHaveReachedReceiver) {
    this.mayHaveReachedReceiver = mayHaveReachedReceiver;
  }

  /**
   * True when a row recorded with this reason may have reached the receiver; the first such record
   * starts the command's max age ({@link OutboxRecord#firstSentAt()}).
   */
  public boolean mayHaveReachedReceiver() {
    return mayHaveReachedReceiver;
  }

  /** True for the terminal reasons that ask an operator to look before doing anything else. */
  public boolean needsAttention() {
    return this == UNRESOLVED_KEY_EXPIRED;
  }

  /** Lower-case name stored and printed, e.g. {@code not_sent_offline}. */
  public String wireName() {
    return wireName;
  }

  /**
   * The reason with this {@linkplain #wireName() wire name}.
   *
   * @throws IllegalArgumentException naming the value when it is not one
   */
  public static Reason fromWireName(String name) {
    try {
      Reason reason = valueOf(name.toUpperCase(Locale.ROOT));
      if (reason.wireName().equals(name)) {
        return reason;
      }
    } catch (IllegalArgumentException e) {
      // fall through to the message below
    }
    throw new IllegalArgumentException("unknown reason '" + name + "'");
  }

  @Override
  public String toString() {
    return wireName();
  }
}
