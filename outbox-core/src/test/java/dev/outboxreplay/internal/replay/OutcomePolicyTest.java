package dev.outboxreplay.internal.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.ForbiddenPolicy;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Payload;
import dev.outboxreplay.Reason;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.StaleSessionPolicy;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.TransportResult.Kind;
import dev.outboxreplay.internal.replay.ClaimDecision.Next;
import dev.outboxreplay.internal.replay.Decision.Effect;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * The outcome policy as a table: claimed-from status, result kind, session, attempts and age in,
 * one decision out. No database, no network, no wall clock.
 */
class OutcomePolicyTest {
  static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");
  static final Duration HOLD = Duration.ofSeconds(30);
  /** No jitter: 1 s doubling to 5 min; 5 attempts; max age 3 days; key retention 7 days. */
  static final RetryPolicy RETRY = RetryPolicy.builder().random(new SplittableRandom(1))
      .jitter(0).maxAttempts(5).build();
  static final OutcomePolicy POLICY = new OutcomePolicy(RETRY, HOLD, StaleSessionPolicy.HOLD,
      ForbiddenPolicy.REJECT_COMMAND);
  static final StoredResponse OK = new StoredResponse(201, "{}".getBytes());

  /** A held row: status claimed or sending, claimed from {@code from}. */
  static OutboxRecord held(Status status, Status from, int attempts, Instant firstSentAt) {
    Instant created = NOW.minus(Duration.ofDays(30)); // accepted long ago: age never counts
    return new OutboxRecord(CommandId.parse("01890a5d-ac96-774b-bcce-b302099a8057"),
        new IdempotencyKey("note.put:n1:01890a5d-ac96-774b-bcce-b302099a8057"), "note.put", "n1",
        Payload.ofCanonicalBytes(new byte[] {'1'}), status, attempts, NOW, "r", from, 7,
        NOW.plusSeconds(60), 0, null, null, created, NOW, 1, 1, firstSentAt);
  }

  static OutboxRecord sending(Status from, int attempts, Instant firstSentAt) {
    return held(Status.SENDING, from, attempts, firstSentAt);
  }

  static OutboxRecord claimed(Status from, int attempts, Instant firstSentAt) {
    return held(Status.CLAIMED, from, attempts, firstSentAt);
  }

  static TransportResult result(Kind kind, Duration retryAfter) {
    return new TransportResult(kind, kind == Kind.ACKED ? OK : null, retryAfter, "detail", "");
  }

  /** One row of the table: the decision made, and what it must be. */
  record Row(String when, Status expected, Decision decision, Status to, Reason reason,
      boolean counts, Instant due, Effect effect) {}

  static Row row(String when, OutboxRecord held, Function<OutboxRecord, Decision> decide,
      Status to, Reason reason, boolean counts, Instant due, Effect effect) {
    return new Row(when, held.status(), decide.apply(held), to, reason, counts, due, effect);
  }

  static Function<OutboxRecord, Decision> answer(Kind kind) {
    return h -> POLICY.onAnswer(h, h.status(), result(kind, null), false, true, NOW);
  }

  @Test
  void eachAnswerMapsToExactlyOneDecision() {
    Instant hourAgo = NOW.minus(Duration.ofHours(1));
    Instant fourDaysAgo = NOW.minus(Duration.ofDays(4));
    List<Row> table = new ArrayList<>(List.of(
        row("2xx", sending(Status.QUEUED, 0, null), answer(Kind.ACKED),
            Status.ACKED, Reason.ACKED, true, null, Effect.NONE),
        row("reconciled committed", claimed(Status.UNKNOWN, 1, hourAgo),
            h -> POLICY.onAnswer(h, Status.CLAIMED, result(Kind.ACKED, null), true, true, NOW),
            Status.ACKED, Reason.RECONCILED_COMMITTED, true, null, Effect.NONE),
        row("2xx after the session changed", sending(Status.QUEUED, 0, null),
            h -> POLICY.onAnswer(h, Status.SENDING, result(Kind.ACKED, null), false, false, NOW),
            Status.UNKNOWN, Reason.STALE_RESPONSE, false, NOW, Effect.NONE),
        row("refused connect, never attempted", sending(Status.QUEUED, 0, null),
            answer(Kind.NOT_SENT),
            Status.RETRYABLE_FAILED, Reason.NOT_SENT_OFFLINE, false, NOW, Effect.OFFLINE),
        row("refused connect of an unknown row stays unknown", sending(Status.UNKNOWN, 3, hourAgo),
            answer(Kind.NOT_SENT),
            Status.UNKNOWN, Reason.NOT_SENT_OFFLINE, false, NOW, Effect.OFFLINE),
        row("refused connect at max attempts and past max age", sending(Status.RETRYABLE_FAILED,
                4, fourDaysAgo), answer(Kind.NOT_SENT),
            Status.RETRYABLE_FAILED, Reason.NOT_SENT_OFFLINE, false, NOW, Effect.OFFLINE),
        row("503, second attempt: backs off 2 s", sending(Status.RETRYABLE_FAILED, 1, hourAgo),
            answer(Kind.RETRYABLE),
            Status.RETRYABLE_FAILED, Reason.RETRYABLE_RESPONSE, true, NOW.plusSeconds(2),
            Effect.NONE),
        row("503 with Retry-After 120 s", sending(Status.QUEUED, 0, null),
            h -> POLICY.onAnswer(h, Status.SENDING, result(Kind.RETRYABLE, Duration
                .ofSeconds(120)), false, true, NOW),
            Status.RETRYABLE_FAILED, Reason.RETRYABLE_RESPONSE, true, NOW.plusSeconds(120),
            Effect.NONE),
        row("503 at the last attempt", sending(Status.RETRYABLE_FAILED, 4, hourAgo),
            answer(Kind.RETRYABLE),
            Status.REJECTED, Reason.POISON_MAX_ATTEMPTS, true, null, Effect.POISON),
        row("503 past max age from the first send", sending(Status.RETRYABLE_FAILED, 1,
                fourDaysAgo), answer(Kind.RETRYABLE),
            Status.REJECTED, Reason.POISON_MAX_AGE, true, null, Effect.POISON),
        row("2xx whose answer was too large to keep", sending(Status.QUEUED, 0, null),
            h -> POLICY.onAnswer(h, Status.SENDING, new TransportResult(Kind.ACKED, null, null,
                "response_too_large", ""), false, true, NOW),
            Status.ACKED, Reason.ACKED_WITHOUT_ANSWER, true, null, Effect.NONE),
        row("key already used, on a resend after an unknown outcome",
            sending(Status.UNKNOWN, 1, hourAgo), answer(Kind.KEY_ALREADY_USED),
            Status.ACKED, Reason.ALREADY_APPLIED, true, null, Effect.NONE),
        row("key already used, on a resend after a 503", sending(Status.RETRYABLE_FAILED, 1,
                hourAgo), answer(Kind.KEY_ALREADY_USED),
            Status.ACKED, Reason.ALREADY_APPLIED, true, null, Effect.NONE),
        row("key already used, on a first attempt: another used the key",
            sending(Status.QUEUED, 0, null), answer(Kind.KEY_ALREADY_USED),
            Status.CONFLICT, Reason.CONFLICT, true, null, Effect.NONE),
        row("key already used, after only requests that never left",
            sending(Status.RETRYABLE_FAILED, 0, null), answer(Kind.KEY_ALREADY_USED),
            Status.CONFLICT, Reason.CONFLICT, true, null, Effect.NONE),
        row("key already used after the session changed", sending(Status.UNKNOWN, 1, hourAgo),
            h -> POLICY.onAnswer(h, Status.SENDING, result(Kind.KEY_ALREADY_USED, null), false,
                false, NOW),
            Status.UNKNOWN, Reason.STALE_RESPONSE, false, NOW, Effect.NONE),
        row("no response: unknown", sending(Status.QUEUED, 0, null), answer(Kind.UNKNOWN),
            Status.UNKNOWN, Reason.OUTCOME_UNKNOWN, true, NOW.plusSeconds(1), Effect.NONE),
        row("no response at the last attempt: still unknown, never poisoned",
            sending(Status.UNKNOWN, 9, hourAgo), answer(Kind.UNKNOWN),
            Status.UNKNOWN, Reason.OUTCOME_UNKNOWN, true, NOW.plus(Duration.ofMinutes(5)),
            Effect.NONE),
        row("no response, next resend past key retention",
            sending(Status.UNKNOWN, 9, NOW.minus(Duration.ofDays(7)).plusSeconds(60)),
            answer(Kind.UNKNOWN),
            Status.REJECTED, Reason.UNRESOLVED_KEY_EXPIRED, true, null, Effect.POISON),
        row("409 in progress: hold interval, not an attempt", sending(Status.UNKNOWN, 2, hourAgo),
            answer(Kind.IN_PROGRESS),
            Status.UNKNOWN, Reason.IN_PROGRESS, false, NOW.plus(HOLD), Effect.NONE),
        row("reconciled processing", claimed(Status.UNKNOWN, 2, hourAgo),
            h -> POLICY.onAnswer(h, Status.CLAIMED, result(Kind.IN_PROGRESS, null), true, true,
                NOW),
            Status.UNKNOWN, Reason.RECONCILED_PROCESSING, false, NOW.plus(HOLD), Effect.NONE),
        row("business 409 or 422", sending(Status.QUEUED, 0, null), answer(Kind.CONFLICT),
            Status.CONFLICT, Reason.CONFLICT, true, null, Effect.NONE),
        row("400", sending(Status.QUEUED, 0, null), answer(Kind.REJECTED),
            Status.REJECTED, Reason.REJECTED_BY_RECEIVER, true, null, Effect.NONE),
        row("403: this command is forbidden", sending(Status.QUEUED, 0, null),
            answer(Kind.FORBIDDEN),
            Status.REJECTED, Reason.FORBIDDEN, true, null, Effect.NONE),
        row("403 under the session-wide policy", sending(Status.QUEUED, 0, null),
            h -> new OutcomePolicy(RETRY, HOLD, StaleSessionPolicy.HOLD,
                ForbiddenPolicy.PAUSE_SESSION).onAnswer(h, Status.SENDING,
                result(Kind.FORBIDDEN, null), false, true, NOW),
            Status.RETRYABLE_FAILED, Reason.CREDENTIALS_REFUSED, false, NOW,
            Effect.PAUSE_FOR_CREDENTIALS),
        row("401", sending(Status.QUEUED, 0, null), answer(Kind.UNAUTHORIZED),
            Status.RETRYABLE_FAILED, Reason.CREDENTIALS_REFUSED, false, NOW,
            Effect.PAUSE_FOR_CREDENTIALS),
        row("applier threw on a committed answer", sending(Status.QUEUED, 0, null),
            h -> POLICY.applyFailed(h, "boom", NOW),
            Status.UNKNOWN, Reason.APPLY_FAILED, true, NOW.plusSeconds(1), Effect.NONE),
        row("primed, not sent: paused", sending(Status.QUEUED, 0, null),
            h -> POLICY.notSent(h, Reason.NOT_SENT_REPLAY_PAUSED, NOW),
            Status.RETRYABLE_FAILED, Reason.NOT_SENT_REPLAY_PAUSED, false, NOW, Effect.NONE),
        row("primed from unknown, not sent", sending(Status.UNKNOWN, 2, hourAgo),
            h -> POLICY.notSent(h, Reason.NOT_SENT_LEASE_HALF_SPENT, NOW),
            Status.UNKNOWN, Reason.NOT_SENT_LEASE_HALF_SPENT, false, NOW, Effect.NONE),
        row("claimed, given back: paused", claimed(Status.QUEUED, 0, null),
            h -> POLICY.notSent(h, Reason.REPLAY_PAUSED, NOW),
            Status.QUEUED, Reason.REPLAY_PAUSED, false, NOW, Effect.NONE)));
    SoftAssertions soft = new SoftAssertions();
    for (Row r : table) {
      var o = r.decision().outcome();
      soft.assertThat(o.status()).as("%s: status", r.when()).isEqualTo(r.to());
      soft.assertThat(o.reason()).as("%s: reason", r.when()).isEqualTo(r.reason());
      soft.assertThat(o.countsAsAttempt()).as("%s: counts", r.when()).isEqualTo(r.counts());
      soft.assertThat(r.decision().effect()).as("%s: effect", r.when()).isEqualTo(r.effect());
      if (r.due() != null) {
        soft.assertThat(o.nextAttemptAt()).as("%s: due", r.when()).isEqualTo(r.due());
      }
      soft.assertThat(StateMachine.isAllowed(r.expected(), o.status()))
          .as("%s: %s -> %s is in the state table", r.when(), r.expected(), o.status()).isTrue();
    }
    soft.assertAll();
  }

  @Test
  void aClaimedRowIsSentReconciledOrSettledWithoutSending() {
    Instant hourAgo = NOW.minus(Duration.ofHours(1));
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(POLICY.onClaim(claimed(Status.QUEUED, 0, null), 0, NOW).next())
        .as("fresh").isEqualTo(Next.SEND);
    soft.assertThat(POLICY.onClaim(claimed(Status.RETRYABLE_FAILED, 0, null), 0,
        NOW.plus(Duration.ofDays(40))).next())
        .as("accepted 70 days ago but never sent: offline does not age it").isEqualTo(Next.SEND);
    soft.assertThat(POLICY.onClaim(claimed(Status.UNKNOWN, 5, hourAgo), 0, NOW).next())
        .as("unknown at max attempts is reconciled first").isEqualTo(Next.RECONCILE);
    soft.assertThat(POLICY.onClaim(claimed(Status.UNKNOWN, 1, NOW.minus(Duration.ofDays(4))), 0,
        NOW).next()).as("unknown past max age, within key retention").isEqualTo(Next.RECONCILE);
    soft.assertAll();

    assertSettled(POLICY.onClaim(claimed(Status.RETRYABLE_FAILED, 5, hourAgo), 0, NOW),
        Status.REJECTED, Reason.POISON_MAX_ATTEMPTS, Effect.POISON);
    assertSettled(POLICY.onClaim(claimed(Status.RETRYABLE_FAILED, 1,
        NOW.minus(Duration.ofDays(4))), 0, NOW), Status.REJECTED, Reason.POISON_MAX_AGE,
        Effect.POISON);
    assertSettled(POLICY.onClaim(claimed(Status.UNKNOWN, 3, NOW.minus(Duration.ofDays(7))), 0,
        NOW), Status.REJECTED, Reason.UNRESOLVED_KEY_EXPIRED, Effect.POISON);
    assertSettled(POLICY.onClaim(claimed(Status.QUEUED, 0, null), 1, NOW),
        Status.QUEUED, Reason.HELD_STALE_SESSION, Effect.NONE);
    assertThat(POLICY.onClaim(claimed(Status.QUEUED, 0, null), 1, NOW).decision().outcome()
        .nextAttemptAt()).isEqualTo(NOW.plus(HOLD));
    OutcomePolicy rejecting = new OutcomePolicy(RETRY, HOLD, StaleSessionPolicy.REJECT,
        ForbiddenPolicy.REJECT_COMMAND);
    assertSettled(rejecting.onClaim(claimed(Status.QUEUED, 0, null), 1, NOW),
        Status.REJECTED, Reason.STALE_SESSION, Effect.NONE);
    OutcomePolicy resending = new OutcomePolicy(RETRY, HOLD, StaleSessionPolicy.RESEND,
        ForbiddenPolicy.REJECT_COMMAND);
    assertThat(resending.onClaim(claimed(Status.QUEUED, 0, null), 1, NOW).next())
        .isEqualTo(Next.SEND);
  }

  private static void assertSettled(ClaimDecision d, Status to, Reason reason, Effect effect) {
    assertThat(d.next()).isEqualTo(Next.RECORD);
    assertThat(d.decision().outcome().status()).isEqualTo(to);
    assertThat(d.decision().outcome().reason()).isEqualTo(reason);
    assertThat(d.decision().outcome().countsAsAttempt()).as("nothing was sent").isFalse();
    assertThat(d.decision().effect()).isEqualTo(effect);
    assertThat(StateMachine.isAllowed(Status.CLAIMED, to)).isTrue();
  }

  @Test
  void aRequestInProgressWaitsForItsRetryAfterCappedAndNeverLessThanTheHold() {
    OutboxRecord h = sending(Status.QUEUED, 0, null);
    java.util.function.Function<Duration, Instant> next = retryAfter -> POLICY.onAnswer(h,
        Status.SENDING, result(Kind.IN_PROGRESS, retryAfter), false, true, NOW)
        .outcome().nextAttemptAt();
    assertThat(next.apply(Duration.ofSeconds(90))).isEqualTo(NOW.plusSeconds(90));
    assertThat(next.apply(Duration.ofSeconds(5))).as("shorter than the hold")
        .isEqualTo(NOW.plus(HOLD));
    assertThat(next.apply(Duration.ofSeconds(-5))).as("negative").isEqualTo(NOW.plus(HOLD));
    assertThat(next.apply(Duration.ofDays(2))).as("capped at maxRetryAfter")
        .isEqualTo(NOW.plus(RETRY.maxRetryAfter()));
    assertThat(next.apply(RETRY.maxRetryAfter())).isEqualTo(NOW.plus(RETRY.maxRetryAfter()));
  }

  @Test
  void maxAgeEndsARetryOnlyOnceItIsPast() {
    Instant exactly = NOW.minus(RETRY.maxAge());
    assertThat(POLICY.onAnswer(sending(Status.RETRYABLE_FAILED, 1, exactly), Status.SENDING,
        result(Kind.RETRYABLE, null), false, true, NOW).outcome().status())
        .as("at exactly max age").isEqualTo(Status.RETRYABLE_FAILED);
    assertThat(POLICY.onAnswer(sending(Status.RETRYABLE_FAILED, 1, exactly.minusMillis(1)),
        Status.SENDING, result(Kind.RETRYABLE, null), false, true, NOW).outcome().status())
        .as("a millisecond past it").isEqualTo(Status.REJECTED);
  }
}
