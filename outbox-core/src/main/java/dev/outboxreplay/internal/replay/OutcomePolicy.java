package dev.outboxreplay.internal.replay;

import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.ForbiddenPolicy;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Reason;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.StaleSessionPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.internal.replay.Decision.Effect;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The one place that decides what happened to a held row means: next status, reason, whether it
 * counts as an attempt, when it is due, and whether replay pauses, holds offline or gives up. Pure:
 * no I/O, {@code now} is passed in (the retry policy's jitter is its only other input).
 *
 * <p>The rules, also in {@code docs/failure-points.md}:
 * <ul>
 *   <li>A request that provably never left is not an attempt, never poisons and never starts the
 *       max age; replay holds offline.
 *   <li>Max age counts from {@link OutboxRecord#firstSentAt()}, never from accept.
 *   <li>A row that may have reached the receiver (claimed from unknown) is always reconciled or
 *       resent with its key before any poison decision; max attempts never ends it. It ends only
 *       when a resend would fall past the receiver's key retention, with
 *       {@link Reason#UNRESOLVED_KEY_EXPIRED}, which needs attention.
 *   <li>A row that was not sent keeps the knowledge of its last attempt: claimed from unknown, it
 *       stays unknown.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class OutcomePolicy {
  private final RetryPolicy retry;
  private final Duration holdInterval;
  private final StaleSessionPolicy stale;
  private final ForbiddenPolicy forbidden;

  public OutcomePolicy(RetryPolicy retry, Duration holdInterval, StaleSessionPolicy stale,
      ForbiddenPolicy forbidden) {
    this.retry = Objects.requireNonNull(retry, "retry");
    this.holdInterval = Objects.requireNonNull(holdInterval, "holdInterval");
    this.stale = Objects.requireNonNull(stale, "stale");
    this.forbidden = Objects.requireNonNull(forbidden, "forbidden");
  }

  /** What a row just claimed needs, given the session's version now. */
  public ClaimDecision onClaim(OutboxRecord claimed, long sessionVersion, Instant now) {
    if (claimed.sessionVersion() < sessionVersion) {
      ErrorInfo error = new ErrorInfo(Reason.STALE_SESSION.wireName(), "accepted under session "
          + "version " + claimed.sessionVersion() + ", now " + sessionVersion, now);
      switch (stale) {
        case HOLD -> {
          return ClaimDecision.record(waiting(claimed, Reason.HELD_STALE_SESSION,
              now.plus(holdInterval), null, Effect.NONE));
        }
        case REJECT -> {
          return ClaimDecision.record(terminal(Status.REJECTED, Reason.STALE_SESSION, error,
              null, false, Effect.NONE));
        }
        case RESEND -> { }
      }
    }
    if (claimed.claimedFrom() == Status.UNKNOWN) {
      if (pastKeyRetention(claimed, now)) {
        return ClaimDecision.record(unresolved(claimed, false, now));
      }
      return ClaimDecision.RECONCILE;
    }
    if (claimed.claimedFrom() == Status.RETRYABLE_FAILED) {
      if (claimed.attempt() >= retry.maxAttempts()) {
        return ClaimDecision.record(poison(Reason.POISON_MAX_ATTEMPTS, claimed.attempt(), false,
            now));
      }
      if (pastMaxAge(claimed.firstSentAt(), now)) {
        return ClaimDecision.record(poison(Reason.POISON_MAX_AGE, claimed.attempt(), false, now));
      }
    }
    return ClaimDecision.SEND;
  }

  /**
   * What the answer to one attempt (or one reconciliation) means for the row held in
   * {@code expected}.
   *
   * @param reconciled true when {@code result} is the reconciliation endpoint's answer (acked:
   *     committed; in progress: processing), false for a send
   * @param sessionAdmits whether the session fence admits an answer obtained under the session
   *     the request was made with
   */
  public Decision onAnswer(OutboxRecord held, Status expected, TransportResult result,
      boolean reconciled, boolean sessionAdmits, Instant now) {
    ErrorInfo error = new ErrorInfo(result.errorCode(), result.message(), now);
    int attempts = held.attempt() + 1;
    return switch (result.kind()) {
      case ACKED -> {
        if (!sessionAdmits) {
          // the receiver has the effect: keep it unknown so it is reconciled, never poisoned
          yield staleResponse(now);
        }
        yield new Decision(Outcome.acked(result.response()).withReason(reconciled
            ? Reason.RECONCILED_COMMITTED
            : result.response() == null ? Reason.ACKED_WITHOUT_ANSWER : Reason.ACKED),
            Effect.NONE);
      }
      case KEY_ALREADY_USED -> {
        if (held.firstSentAt() == null) {
          // nothing of this command can have reached the receiver before: another used the key
          yield terminal(Status.CONFLICT, Reason.CONFLICT, error, result.response(), true,
              Effect.NONE);
        }
        if (!sessionAdmits) {
          yield staleResponse(now);
        }
        yield new Decision(Outcome.acked(null).withReason(Reason.ALREADY_APPLIED), Effect.NONE);
      }
      case NOT_SENT -> waiting(held, Reason.NOT_SENT_OFFLINE, now, error, Effect.OFFLINE);
      case RETRYABLE -> {
        if (attempts >= retry.maxAttempts()) {
          yield poison(Reason.POISON_MAX_ATTEMPTS, attempts, true, now);
        }
        if (pastMaxAge(held.firstSentAt() != null ? held.firstSentAt() : now, now)) {
          yield poison(Reason.POISON_MAX_AGE, attempts, true, now);
        }
        yield new Decision(new Outcome(Status.RETRYABLE_FAILED,
            retry.nextAttemptAt(attempts, now, result.retryAfter()), error, null, true,
            Reason.RETRYABLE_RESPONSE), Effect.NONE);
      }
      case UNKNOWN -> mayHaveTakenEffect(held, Reason.OUTCOME_UNKNOWN, error,
          retry.nextAttemptAt(attempts, now, result.retryAfter()), true, now);
      case IN_PROGRESS -> mayHaveTakenEffect(held,
          reconciled ? Reason.RECONCILED_PROCESSING : Reason.IN_PROGRESS, error,
          now.plus(later(capped(result.retryAfter()), holdInterval)), false, now);
      case CONFLICT -> terminal(Status.CONFLICT, Reason.CONFLICT, error, result.response(),
          true, Effect.NONE);
      case REJECTED -> terminal(Status.REJECTED, Reason.REJECTED_BY_RECEIVER, error,
          result.response(), true, Effect.NONE);
      case FORBIDDEN -> forbidden == ForbiddenPolicy.REJECT_COMMAND
          ? terminal(Status.REJECTED, Reason.FORBIDDEN, error, result.response(), true,
              Effect.NONE)
          : waiting(held, Reason.CREDENTIALS_REFUSED, now, error, Effect.PAUSE_FOR_CREDENTIALS);
      case UNAUTHORIZED -> waiting(held, Reason.CREDENTIALS_REFUSED, now, error,
          Effect.PAUSE_FOR_CREDENTIALS);
    };
  }

  /**
   * A confirmed effect whose answer came under another session than the one now: kept unknown so
   * that it is reconciled, never poisoned; nothing applied.
   */
  private static Decision staleResponse(Instant now) {
    return new Decision(new Outcome(Status.UNKNOWN, now, new ErrorInfo(
        Reason.STALE_RESPONSE.wireName(), "the session changed while the request was in "
            + "flight; not applied", now), null, false, Reason.STALE_RESPONSE), Effect.NONE);
  }

  /**
   * A held row given back without a request (replay paused, lease half spent, pass stopped): due
   * now, not an attempt, and still unknown if it was.
   */
  public Decision notSent(OutboxRecord held, Reason reason, Instant now) {
    return waiting(held, reason, now, new ErrorInfo(reason.wireName(),
        "given back before its request was made", now), Effect.NONE);
  }

  /**
   * The response applier threw on an answer the receiver committed: nothing was applied; the row
   * becomes unknown so the stored answer is fetched again (reconciled or resent with its key).
   */
  public Decision applyFailed(OutboxRecord held, String detail, Instant now) {
    return notApplied(held, Reason.APPLY_FAILED, detail, now);
  }

  /**
   * An ack for a command sent right after the command before it in its entity ended, when that
   * end was not recorded after all (its applier threw, or its lease was lost): not applied, since
   * responses are applied in entity order; the row becomes unknown so the stored answer is
   * fetched again once the earlier command has ended.
   */
  public Decision earlierCommandUnsettled(OutboxRecord held, Instant now) {
    return notApplied(held, Reason.EARLIER_COMMAND_UNSETTLED, "acked, not applied: the command "
        + "before it in its entity did not end as recorded", now);
  }

  /**
   * An answer the receiver committed but that was not applied: unknown, an attempt, due after
   * the back-off, so the stored answer is fetched again.
   */
  private Decision notApplied(OutboxRecord held, Reason reason, String detail, Instant now) {
    return new Decision(new Outcome(Status.UNKNOWN,
        retry.nextAttemptAt(held.attempt() + 1, now, null),
        new ErrorInfo(reason.wireName(), detail, now), null, true, reason), Effect.NONE);
  }

  /**
   * The answer may mean the effect happened: unknown, unless the next resend would fall past the
   * receiver's key retention.
   */
  private Decision mayHaveTakenEffect(OutboxRecord held, Reason reason, ErrorInfo error,
      Instant next, boolean countsAsAttempt, Instant now) {
    Instant firstSent = held.firstSentAt() != null ? held.firstSentAt() : now;
    if (!next.isBefore(firstSent.plus(retry.keyRetention()))) {
      return unresolved(held, countsAsAttempt, now);
    }
    return new Decision(new Outcome(Status.UNKNOWN, next, error, null, countsAsAttempt, reason),
        Effect.NONE);
  }

  private Decision unresolved(OutboxRecord held, boolean countsAsAttempt, Instant now) {
    return terminal(Status.REJECTED, Reason.UNRESOLVED_KEY_EXPIRED, new ErrorInfo(
        Reason.UNRESOLVED_KEY_EXPIRED.wireName(), "outcome still unknown and the receiver's key "
            + "retention (" + retry.keyRetention() + ") has passed since the first send at "
            + held.firstSentAt() + "; check the receiver before requeueing", now), null,
        countsAsAttempt, Effect.POISON);
  }

  /**
   * Back to waiting, not an attempt: claimed rows return to where they were claimed from; sending
   * rows become retryable_failed, or stay unknown when their last attempt may have reached the
   * receiver.
   */
  private static Decision waiting(OutboxRecord held, Reason reason, Instant due, ErrorInfo error,
      Effect effect) {
    Status to = held.status() == Status.CLAIMED ? held.claimedFrom()
        : held.claimedFrom() == Status.UNKNOWN ? Status.UNKNOWN : Status.RETRYABLE_FAILED;
    return new Decision(new Outcome(to, due, error, null, false, reason), effect);
  }

  private static Decision terminal(Status status, Reason reason, ErrorInfo error,
      StoredResponse response, boolean countsAsAttempt, Effect effect) {
    return new Decision(new Outcome(status, null, error, response, countsAsAttempt, reason),
        effect);
  }

  private static Decision poison(Reason reason, int attempts, boolean countsAsAttempt,
      Instant now) {
    return terminal(Status.REJECTED, reason, new ErrorInfo(reason.wireName(),
        "gave up after " + attempts + " attempts", now), null, countsAsAttempt, Effect.POISON);
  }

  private boolean pastMaxAge(Instant firstSentAt, Instant now) {
    return firstSentAt != null && Duration.between(firstSentAt, now).compareTo(retry.maxAge()) > 0;
  }

  private boolean pastKeyRetention(OutboxRecord held, Instant now) {
    return held.firstSentAt() != null
        && !now.isBefore(held.firstSentAt().plus(retry.keyRetention()));
  }

  private Duration capped(Duration retryAfter) {
    return retryAfter == null || retryAfter.isNegative() ? null
        : retryAfter.compareTo(retry.maxRetryAfter()) > 0 ? retry.maxRetryAfter() : retryAfter;
  }

  private static Duration later(Duration a, Duration b) {
    return a != null && a.compareTo(b) > 0 ? a : b;
  }
}
