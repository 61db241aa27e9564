package dev.outboxreplay.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.IdempotencyConflictException;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Behaviour every {@link OutboxStore} must have. A store module subclasses this once and supplies
 * how to open, close and run a transaction on its store; all tests then run against it.
 *
 * @param <T> the store's transaction handle
 */
public abstract class OutboxStoreContract<T> {
  protected static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir protected Path directory;
  protected ManualClock clock;
  protected OutboxStore<T> store;
  protected Outbox<T> outbox;

  /** Opens (or reopens) a store whose data lives in {@code directory}. */
  protected abstract OutboxStore<T> openStore(Path directory);

  /** Closes the store and everything it holds, as a process exit would. */
  protected abstract void closeStore(OutboxStore<T> store);

  /** Begins a transaction of the caller's own on the store's database. */
  protected abstract T beginTransaction(OutboxStore<T> store);

  protected abstract void commit(T transaction);

  protected abstract void rollback(T transaction);

  @BeforeEach
  void openContractStore() {
    clock = ManualClock.startingAtEpoch2026();
    store = openStore(directory);
    outbox = newOutbox(store);
  }

  @AfterEach
  void closeContractStore() {
    closeStore(store);
  }

  private Outbox<T> newOutbox(OutboxStore<T> s) {
    return Outbox.builder(s).clock(clock).random(new SplittableRandom(42)).build();
  }

  protected OutboxRecord accept(String entity, int n) {
    return outbox.accept(OutboxCommand.of("note.put", entity, Map.of("n", n)));
  }

  private Instant now() {
    return clock.instant();
  }

  @Test
  void acceptedCommandIsQueuedDueAtOnceWithStableIdentity() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord stored = store.find(accepted.commandId()).orElseThrow();
    assertThat(stored).isEqualTo(accepted);
    assertThat(stored.status()).isEqualTo(Status.QUEUED);
    assertThat(stored.attempt()).isZero();
    assertThat(stored.fencingToken()).isZero();
    assertThat(stored.nextAttemptAt()).isEqualTo(now());
    assertThat(stored.idempotencyKey().value())
        .isEqualTo("note.put:note-1:" + accepted.commandId());
    assertThat(stored.payload().json()).isEqualTo("{\"n\":1}");
    assertThat(store.findByKey(accepted.idempotencyKey())).contains(accepted);
  }

  @Test
  void reacceptingSameIdAndPayloadReturnsTheOriginalAndWritesNothing() {
    OutboxRecord first = accept("note-1", 1);
    clock.advance(Duration.ofMinutes(5));
    OutboxRecord again = outbox.accept(OutboxCommand.of("note.put", "note-1", Map.of("n", 1))
        .withCommandId(first.commandId()));
    assertThat(again).isEqualTo(first);
    assertThat(store.countByStatus().get(Status.QUEUED)).isEqualTo(1);
  }

  @Test
  void sameIdWithDifferentPayloadIsAConflictAndWritesNothing() {
    OutboxRecord first = accept("note-1", 1);
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("note.put", "note-1",
        Map.of("n", 2)).withCommandId(first.commandId())))
        .isInstanceOf(IdempotencyConflictException.class)
        .hasMessageContaining(first.commandId().toString());
    assertThat(store.find(first.commandId())).contains(first);
    assertThat(total()).isEqualTo(1);
  }

  @Test
  void sameKeyWithDifferentPayloadIsAConflictAndWritesNothing() {
    IdempotencyKey key = new IdempotencyKey("pay:invoice-7");
    outbox.accept(OutboxCommand.of("pay", "invoice-7", Map.of("cents", 100))
        .withIdempotencyKey(key));
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("pay", "invoice-7",
        Map.of("cents", 999)).withIdempotencyKey(key)))
        .isInstanceOf(IdempotencyConflictException.class);
    assertThat(total()).isEqualTo(1);
  }

  @Test
  void sameKeyAndPayloadUnderANewIdReturnsTheOriginal() {
    IdempotencyKey key = new IdempotencyKey("pay:invoice-8");
    OutboxRecord first = outbox.accept(OutboxCommand.of("pay", "invoice-8",
        Map.of("cents", 100)).withIdempotencyKey(key));
    OutboxRecord second = outbox.accept(OutboxCommand.of("pay", "invoice-8",
        Map.of("cents", 100)).withIdempotencyKey(key));
    assertThat(second).isEqualTo(first);
    assertThat(total()).isEqualTo(1);
  }

  @Test
  void acceptAllWritesAllOrNothing() {
    OutboxRecord existing = accept("note-1", 1);
    List<OutboxCommand> batch = List.of(
        OutboxCommand.of("note.put", "note-2", Map.of("n", 2)),
        OutboxCommand.of("note.put", "note-3", Map.of("n", 3)),
        OutboxCommand.of("note.put", "note-1", Map.of("n", 99))
            .withCommandId(existing.commandId()));
    assertThatThrownBy(() -> outbox.acceptAll(batch))
        .isInstanceOf(IdempotencyConflictException.class);
    assertThat(total()).isEqualTo(1);

    List<OutboxRecord> written = outbox.acceptAll(batch.subList(0, 2));
    assertThat(written).extracting(OutboxRecord::entityKey).containsExactly("note-2", "note-3");
    assertThat(total()).isEqualTo(3);
  }

  @Test
  void acceptAllCollapsesARepeatedCommandInsideTheBatch() {
    CommandId id = accept("warmup", 0).commandId();
    OutboxCommand once = OutboxCommand.of("note.put", "note-9", Map.of("n", 9));
    OutboxRecord first = outbox.accept(once);
    List<OutboxRecord> written = outbox.acceptAll(List.of(
        once.withCommandId(first.commandId()), once.withCommandId(first.commandId())));
    assertThat(written).containsExactly(first, first);
    assertThat(store.find(id)).isPresent();
    assertThat(total()).isEqualTo(2);
  }

  @Test
  void acceptInCallerTransactionCommitsAndRollsBackWithIt() {
    T rolledBack = beginTransaction(store);
    OutboxRecord lost = outbox.accept(rolledBack, OutboxCommand.of("note.put", "a", Map.of()));
    rollback(rolledBack);
    assertThat(store.find(lost.commandId())).isEmpty();

    T committed = beginTransaction(store);
    OutboxRecord kept = outbox.accept(committed, OutboxCommand.of("note.put", "a", Map.of()));
    commit(committed);
    assertThat(store.find(kept.commandId())).contains(kept);
  }

  @Test
  void aRefusedAcceptInTheCallersTransactionLeavesTheCallersOtherWritesInIt() {
    OutboxRecord stored = accept("note-1", 1);
    T tx = beginTransaction(store);
    OutboxRecord before = outbox.accept(tx, OutboxCommand.of("note.put", "note-2",
        Map.of("n", 2)));
    assertThatThrownBy(() -> outbox.accept(tx, OutboxCommand.of("note.put", "note-1",
        Map.of("n", 99)).withCommandId(stored.commandId())))
        .isInstanceOf(IdempotencyConflictException.class);
    assertThat(outbox.accept(tx, OutboxCommand.of("note.put", "note-1", Map.of("n", 1))
        .withCommandId(stored.commandId()))).isEqualTo(stored);
    OutboxRecord after = outbox.accept(tx, OutboxCommand.of("note.put", "note-3",
        Map.of("n", 3)));
    commit(tx);
    assertThat(store.find(before.commandId())).contains(before);
    assertThat(store.find(after.commandId())).contains(after);
    assertThat(store.find(stored.commandId())).contains(stored);
    assertThat(total()).isEqualTo(3);
  }

  @Test
  void rowsSurviveClosingAndReopeningTheStore() {
    OutboxRecord accepted = accept("note-1", 1);
    closeStore(store);
    store = openStore(directory);
    outbox = newOutbox(store);
    OutboxRecord reread = store.find(accepted.commandId()).orElseThrow();
    assertThat(reread).isEqualTo(accepted);
    assertThat(reread.payload().bytes()).isEqualTo(accepted.payload().bytes());
  }

  @Test
  void eachClaimGivesAStrictlyLargerFencingToken() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord first = claimOne("a");
    store.release(first.commandId(), first.fencingToken(), now(), now());
    OutboxRecord second = claimOne("b");
    assertThat(first.commandId()).isEqualTo(accepted.commandId());
    assertThat(first.fencingToken()).isPositive();
    assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
    assertThat(second.claimOwner()).isEqualTo("b");
    assertThat(second.leaseExpiresAt()).isEqualTo(now().plus(LEASE));
  }

  @Test
  void claimHandsOutOnlyTheOldestOpenCommandOfEachEntity() {
    OutboxRecord a1 = accept("A", 1);
    OutboxRecord a2 = accept("A", 2);
    OutboxRecord b1 = accept("B", 1);
    List<OutboxRecord> claimed = store.claim("r", LEASE, 10, now());
    assertThat(claimed).extracting(OutboxRecord::commandId)
        .containsExactly(a1.commandId(), b1.commandId());

    OutboxRecord sending = store.markSending(a1.commandId(), claimed.get(0).fencingToken(),
        now().plus(LEASE), now());
    store.complete(a1.commandId(), sending.fencingToken(), Status.SENDING,
        Outcome.acked(new StoredResponse(200, new byte[0])), now());
    assertThat(store.claim("r", LEASE, 10, now())).extracting(OutboxRecord::commandId)
        .containsExactly(a2.commandId());
  }

  @Test
  void aStuckHeadBlocksOnlyItsOwnEntity() {
    OutboxRecord a1 = accept("A", 1);
    accept("A", 2);
    OutboxRecord b1 = accept("B", 1);
    OutboxRecord held = store.claim("r", LEASE, 1, now()).get(0);
    assertThat(held.commandId()).isEqualTo(a1.commandId());
    store.markSending(a1.commandId(), held.fencingToken(), now().plus(LEASE), now());
    store.complete(a1.commandId(), held.fencingToken(), Status.SENDING,
        Outcome.retryable(now().plus(Duration.ofHours(1)), error("http_503")), now());

    assertThat(store.claim("r", LEASE, 10, now())).extracting(OutboxRecord::commandId)
        .containsExactly(b1.commandId());
  }

  @Test
  void rowsAreNotClaimedBeforeTheyAreDue() {
    OutboxRecord a1 = accept("A", 1);
    OutboxRecord held = claimOne("r");
    store.release(a1.commandId(), held.fencingToken(), now().plusSeconds(60), now());
    assertThat(store.claim("r", LEASE, 10, now().plusSeconds(59))).isEmpty();
    assertThat(store.claim("r", LEASE, 10, now().plusSeconds(60))).hasSize(1);
  }

  @Test
  void zombieReplayerCannotMarkSendingOrAckAfterLeaseTakeover() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord zombie = claimOne("A");
    clock.advance(LEASE.plusSeconds(1));
    assertThat(store.claim("B", LEASE, 10, now())).as("an expired lease is recovered first")
        .isEmpty();
    assertThat(store.recoverExpiredLeases(now()).stream().map(OutboxStore.RecoveredLease::change))
        .extracting(e -> e.from() + ">" + e.to() + ":" + e.reason())
        .containsExactly("claimed>queued:lease_expired_while_claimed");
    OutboxRecord successor = claimOne("B");
    assertThat(successor.claimOwner()).isEqualTo("B");

    assertThatThrownBy(() -> store.markSending(accepted.commandId(), zombie.fencingToken(),
        now().plus(LEASE), now()))
        .isInstanceOf(FencedOffException.class)
        .satisfies(e -> assertThat(((FencedOffException) e).currentToken())
            .isEqualTo(successor.fencingToken()));
    assertThatThrownBy(() -> store.complete(accepted.commandId(), zombie.fencingToken(),
        Status.CLAIMED, Outcome.acked(new StoredResponse(200, "zombie".getBytes())), now()))
        .isInstanceOf(FencedOffException.class);
    assertThat(store.find(accepted.commandId()).orElseThrow().claimOwner()).isEqualTo("B");

    store.markSending(accepted.commandId(), successor.fencingToken(), now().plus(LEASE), now());
    OutboxRecord done = store.complete(accepted.commandId(), successor.fencingToken(),
        Status.SENDING, Outcome.acked(new StoredResponse(201, "B".getBytes())), now());
    assertThat(done.status()).isEqualTo(Status.ACKED);
    assertThat(done.response().body()).isEqualTo("B".getBytes());
  }

  @Test
  void zombieSenderCannotRecordAnOutcomeAfterItsSendingLeaseExpired() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    store.markSending(accepted.commandId(), held.fencingToken(), now().plus(LEASE), now());
    clock.advance(LEASE);
    store.recoverExpiredLeases(now());
    OutboxRecord successor = claimOne("B");
    assertThat(successor.claimedFrom()).isEqualTo(Status.UNKNOWN);
    assertThatThrownBy(() -> store.complete(accepted.commandId(), held.fencingToken(),
        Status.SENDING, Outcome.acked(null), now()))
        .isInstanceOf(FencedOffException.class);
  }

  @Test
  void sendingRowWhoseLeaseExpiredBecomesUnknownNeverQueued() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    store.markSending(accepted.commandId(), held.fencingToken(), now().plus(LEASE), now());
    assertThat(store.recoverExpiredLeases(now().plus(LEASE).minusMillis(1))).isEmpty();
    clock.advance(LEASE);
    assertThat(store.recoverExpiredLeases(now()).stream().map(OutboxStore.RecoveredLease::change))
        .extracting(e -> e.from() + ">" + e.to() + ":" + e.reason() + "@" + e.fencingToken())
        .containsExactly("sending>unknown:lease_expired_while_sending@" + held.fencingToken());
    assertThat(store.auditTrail(accepted.commandId())).last()
        .extracting(OutboxStore.AuditEntry::reason)
        .isEqualTo(Reason.LEASE_EXPIRED_WHILE_SENDING);
    OutboxRecord recovered = store.find(accepted.commandId()).orElseThrow();
    assertThat(recovered.status()).isEqualTo(Status.UNKNOWN);
    assertThat(recovered.attempt()).isEqualTo(1);
    assertThat(recovered.firstSentAt()).as("it may have reached the receiver").isEqualTo(now());
    assertThat(recovered.lastError().code()).isEqualTo("lease_expired_while_sending");
    assertThat(store.countByStatus().get(Status.QUEUED)).isZero();
  }

  @Test
  void expiredClaimGoesBackToWhatItWasClaimedFromAndIsClaimedAfresh() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    store.markSending(accepted.commandId(), held.fencingToken(), now().plus(LEASE), now());
    store.complete(accepted.commandId(), held.fencingToken(), Status.SENDING,
        Outcome.unknown(now(), error("timeout_after_send")), now());
    OutboxRecord reclaimed = claimOne("B");
    assertThat(reclaimed.claimedFrom()).isEqualTo(Status.UNKNOWN);
    clock.advance(LEASE);
    assertThat(store.recoverExpiredLeases(now()).stream().map(OutboxStore.RecoveredLease::change))
        .extracting(e -> e.from() + ">" + e.to() + ":" + e.reason())
        .containsExactly("claimed>unknown:lease_expired_while_claimed");
    OutboxRecord takenOver = claimOne("C");
    assertThat(takenOver.claimedFrom()).isEqualTo(Status.UNKNOWN);
    assertThat(takenOver.fencingToken()).isGreaterThan(reclaimed.fencingToken());

    OutboxRecord released = store.release(accepted.commandId(), takenOver.fencingToken(),
        now(), now());
    assertThat(released.status()).isEqualTo(Status.UNKNOWN);
    assertThat(released.claimOwner()).isNull();
  }

  @Test
  void wrongExpectedStatusIsFencedOffAndIllegalMovesAreRefusedWithoutChange() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    assertThatThrownBy(() -> store.complete(accepted.commandId(), held.fencingToken(),
        Status.SENDING, Outcome.acked(null), now()))
        .isInstanceOf(FencedOffException.class);
    assertThatThrownBy(() -> store.complete(accepted.commandId(), held.fencingToken(),
        Status.QUEUED, Outcome.acked(null), now()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("queued -> acked");
    assertThat(store.find(accepted.commandId()).orElseThrow()).isEqualTo(held);
  }

  @Test
  void outcomeRecordsErrorResponseAndAttemptCount() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    store.markSending(accepted.commandId(), held.fencingToken(), now().plus(LEASE), now());
    OutboxRecord failed = store.complete(accepted.commandId(), held.fencingToken(),
        Status.SENDING, Outcome.retryable(now().plusSeconds(5), error("http_503")), now());
    assertThat(failed.attempt()).isEqualTo(1);
    assertThat(failed.lastError().code()).isEqualTo("http_503");
    assertThat(failed.nextAttemptAt()).isEqualTo(now().plusSeconds(5));
    assertThat(failed.claimOwner()).isNull();
    assertThat(failed.leaseExpiresAt()).isNull();

    clock.advance(Duration.ofSeconds(5));
    OutboxRecord again = claimOne("A");
    store.markSending(accepted.commandId(), again.fencingToken(), now().plus(LEASE), now());
    OutboxRecord paused = store.complete(accepted.commandId(), again.fencingToken(),
        Status.SENDING, Outcome.retryable(now(), error("http_401")).notCountedAsAttempt(), now());
    assertThat(paused.attempt()).isEqualTo(1);
    assertThat(paused.lastError().code()).isEqualTo("http_401");

    OutboxRecord third = claimOne("A");
    store.markSending(accepted.commandId(), third.fencingToken(), now().plus(LEASE), now());
    OutboxRecord rejected = store.complete(accepted.commandId(), third.fencingToken(),
        Status.SENDING, Outcome.rejected(error("http_400"),
            new StoredResponse(400, "{\"error\":\"bad\"}".getBytes())), now());
    assertThat(rejected.status()).isEqualTo(Status.REJECTED);
    assertThat(rejected.attempt()).isEqualTo(2);
    assertThat(rejected.response().status()).isEqualTo(400);
  }

  @Test
  void completingAHeldRowReturnsTheRowAsStoredForEveryOutcome() {
    accept("note-1", 1);
    // times with a part below the millisecond, which the table does not keep
    Duration later = Duration.ofMillis(1500).plusNanos(123_456);
    clock.advance(later);
    OutboxRecord offline = completeHeld(holdSending(), Status.SENDING,
        Outcome.retryable(now().plus(later), error("connect_failed"))
            .withReason(Reason.NOT_SENT_OFFLINE).notCountedAsAttempt());
    assertThat(offline.firstSentAt()).isNull();
    assertThat(offline.attempt()).isZero();

    clock.advance(Duration.ofSeconds(2).plus(later));
    OutboxRecord failed = completeHeld(holdSending(), Status.SENDING, Outcome.retryable(
        now().plus(later), new ErrorInfo("http_503", "über-busy \u2603", now())));
    assertThat(failed.firstSentAt()).isNotNull();
    assertThat(failed.attempt()).isEqualTo(1);

    clock.advance(Duration.ofSeconds(2).plus(later));
    OutboxRecord unknown = completeHeld(holdSending(), Status.SENDING,
        Outcome.unknown(now().plus(later), new ErrorInfo("no_response", "", now())));
    assertThat(unknown.firstSentAt()).as("kept from the first").isEqualTo(failed.firstSentAt());

    clock.advance(Duration.ofSeconds(2).plus(later));
    OutboxRecord acked = completeHeld(holdSending(), Status.SENDING,
        Outcome.acked(new StoredResponse(201, "{\"ok\":true}".getBytes())));
    assertThat(acked.lastError().code()).as("an ack keeps the last error").isEqualTo("no_response");
    assertThat(acked.nextAttemptAt()).as("an end keeps the last due time")
        .isEqualTo(unknown.nextAttemptAt());
    assertThat(acked.attempt()).isEqualTo(3);

    OutboxRecord b = accept("note-2", 1);
    clock.advance(later);
    OutboxRecord claimed = claimOne("r");
    assertThat(claimed.commandId()).isEqualTo(b.commandId());
    OutboxRecord rejected = completeHeld(claimed, Status.CLAIMED, Outcome.rejected(
        error("poison_max_age"), new StoredResponse(400, new byte[0])));
    assertThat(rejected.response().body()).isEmpty();

    // held as claimed, but marked sending since: the store reads the row back
    OutboxRecord c = accept("note-3", 1);
    OutboxRecord claimedC = claimOne("r");
    store.markSending(c.commandId(), claimedC.fencingToken(), now().plus(LEASE), now());
    clock.advance(later);
    completeHeld(claimedC, Status.SENDING, Outcome.acked(null));

    // another replayer took the row over: refused, nothing written
    accept("note-4", 1);
    OutboxRecord lost = holdSending();
    clock.advance(LEASE.plusSeconds(1));
    store.recoverExpiredLeases(now());
    OutboxRecord other = claimOne("other");
    T tx = beginTransaction(store);
    assertThatThrownBy(() -> store.complete(tx, lost, Status.SENDING, Outcome.acked(null), now()))
        .isInstanceOf(FencedOffException.class);
    rollback(tx);
    assertThat(lost.entityKey()).isEqualTo("note-4");
    assertThat(store.find(lost.commandId()).orElseThrow()).isEqualTo(other);
  }

  /** Claims the next due row and marks it sending, in one committed transaction. */
  private OutboxRecord holdSending() {
    T tx = beginTransaction(store);
    List<OutboxRecord> claimed = store.claim(tx, "r", LEASE, 1, now());
    assertThat(claimed).as("claim at %s", now()).hasSize(1);
    List<OutboxRecord> sending = store.markSending(tx, claimed, now().plus(LEASE), now());
    commit(tx);
    return sending.get(0);
  }

  /**
   * Records {@code outcome} for {@code held} in a committed transaction, and checks that the row
   * returned is the row as stored, and that the audit trail ends with the change.
   */
  private OutboxRecord completeHeld(OutboxRecord held, Status expected, Outcome outcome) {
    T tx = beginTransaction(store);
    OutboxRecord after = store.complete(tx, held, expected, outcome, now());
    commit(tx);
    assertThat(after).usingRecursiveComparison()
        .isEqualTo(store.find(held.commandId()).orElseThrow());
    assertThat(after.status()).isEqualTo(outcome.status());
    assertThat(after.claimOwner()).isNull();
    assertThat(after.leaseExpiresAt()).isNull();
    List<OutboxStore.AuditEntry> trail = store.auditTrail(held.commandId());
    OutboxStore.AuditEntry last = trail.get(trail.size() - 1);
    assertThat(last.from()).isEqualTo(expected);
    assertThat(last.to()).isEqualTo(outcome.status());
    assertThat(last.fencingToken()).isEqualTo(held.fencingToken());
    assertThat(last.reason()).isEqualTo(outcome.reason());
    return after;
  }

  @Test
  void onlyConflictOrRejectedRowsCanBeRequeuedByAnOperator() {
    OutboxRecord accepted = accept("note-1", 1);
    assertThatThrownBy(() -> store.requeue(accepted.commandId(), now()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("queued");
    assertThatThrownBy(() -> store.requeue(new CommandId(java.util.UUID.randomUUID()), now()))
        .isInstanceOf(NoSuchElementException.class);
    OutboxRecord held = claimOne("A");
    store.complete(accepted.commandId(), held.fencingToken(), Status.CLAIMED,
        Outcome.rejected(error("poison_max_age"), null), now());
    OutboxRecord requeued = store.requeue(accepted.commandId(), now());
    assertThat(requeued.status()).isEqualTo(Status.QUEUED);
    assertThat(requeued.attempt()).isZero();
    assertThat(requeued.idempotencyKey()).isEqualTo(accepted.idempotencyKey());
    assertThat(claimOne("B").commandId()).isEqualTo(accepted.commandId());
  }

  @Test
  void firstSentAtStartsWithTheFirstOutcomeThatMayHaveReachedTheReceiverOnly() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    store.markSending(accepted.commandId(), held.fencingToken(), now().plus(LEASE), now());
    OutboxRecord offline = store.complete(accepted.commandId(), held.fencingToken(),
        Status.SENDING, Outcome.retryable(now(), error("connect_failed"))
            .withReason(Reason.NOT_SENT_OFFLINE).notCountedAsAttempt(), now());
    assertThat(offline.firstSentAt()).as("never left").isNull();
    assertThat(offline.attempt()).isZero();
    clock.advance(java.time.Duration.ofDays(2));
    OutboxRecord again = claimOne("A");
    store.markSending(accepted.commandId(), again.fencingToken(), now().plus(LEASE), now());
    Instant firstReached = now();
    OutboxRecord reached = store.complete(accepted.commandId(), again.fencingToken(),
        Status.SENDING, Outcome.retryable(now(), error("http_503")), now());
    assertThat(reached.firstSentAt()).isEqualTo(firstReached);
    clock.advance(java.time.Duration.ofHours(1));
    OutboxRecord third = claimOne("A");
    store.markSending(accepted.commandId(), third.fencingToken(), now().plus(LEASE), now());
    assertThat(store.complete(accepted.commandId(), third.fencingToken(), Status.SENDING,
        Outcome.unknown(now(), error("no_response")), now()).firstSentAt())
        .as("kept from the first").isEqualTo(firstReached);
  }

  @Test
  void firstAckedAfterFindsALaterAckedCommandOfTheSameEntityOnly() {
    OutboxRecord first = accept("note-1", 1);
    OutboxRecord otherEntity = accept("note-2", 1);
    OutboxRecord held = claimOne("A");
    store.complete(first.commandId(), held.fencingToken(), Status.CLAIMED,
        Outcome.rejected(error("http_400"), null), now());
    OutboxRecord second = accept("note-1", 2);
    assertThat(store.firstAckedAfter(first.commandId())).isEmpty();
    for (OutboxRecord r : store.claim("A", LEASE, 10, now())) {
      store.complete(r.commandId(), r.fencingToken(), Status.CLAIMED, Outcome.acked(null), now());
    }
    assertThat(store.firstAckedAfter(first.commandId())).map(OutboxRecord::commandId)
        .contains(second.commandId());
    assertThat(store.firstAckedAfter(otherEntity.commandId())).isEmpty();
  }

  @Test
  void countAndListReportEveryStatus() {
    accept("A", 1);
    accept("B", 1);
    claimOne("r");
    Map<Status, Long> counts = store.countByStatus();
    assertThat(counts).containsOnlyKeys(Status.values());
    assertThat(counts.get(Status.QUEUED)).isEqualTo(1);
    assertThat(counts.get(Status.CLAIMED)).isEqualTo(1);
    assertThat(store.list(Status.CLAIMED, 10)).extracting(OutboxRecord::entityKey)
        .containsExactly("A");
  }

  @Test
  void everyStatusChangeAfterAcceptIsAuditedWithItsTokenAndReason() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    store.markSending(accepted.commandId(), held.fencingToken(), now().plus(LEASE), now());
    store.complete(accepted.commandId(), held.fencingToken(), Status.SENDING,
        Outcome.retryable(now(), error("http_503")), now());
    assertThat(store.auditTrail(accepted.commandId()))
        .extracting(e -> e.from() + ">" + e.to() + ":" + e.reason() + "@" + e.fencingToken())
        .containsExactly("queued>claimed:claimed@" + held.fencingToken(),
            "claimed>sending:sending@" + held.fencingToken(),
            "sending>retryable_failed:retryable_response@" + held.fencingToken());
    clock.advance(java.time.Duration.ofDays(40));
    assertThat(store.pruneAudit(now().minus(java.time.Duration.ofDays(30)))).isEqualTo(3);
    assertThat(store.auditTrail(accepted.commandId())).isEmpty();
  }

  @Test
  void pruningTheAuditKeepsEntriesWrittenAtOrAfterTheCutoff() {
    OutboxRecord old = accept("A", 1);
    OutboxRecord held = claimOne("r");
    clock.advance(Duration.ofDays(10));
    store.markSending(old.commandId(), held.fencingToken(), now().plus(LEASE), now());
    Instant cutoff = now();
    clock.advance(Duration.ofDays(10));
    store.complete(old.commandId(), held.fencingToken(), Status.SENDING, Outcome.acked(null),
        now());
    assertThat(store.pruneAudit(cutoff)).as("only the claim is older than the cutoff")
        .isEqualTo(1);
    assertThat(store.auditTrail(old.commandId())).extracting(OutboxStore.AuditEntry::to)
        .containsExactly(Status.SENDING, Status.ACKED);
    assertThat(store.pruneAudit(cutoff)).isZero();
  }

  @Test
  void markingSendingInTheCallersTransactionCountsOnlyOnceItCommits() {
    OutboxRecord a = accept("A", 1);
    OutboxRecord b = accept("B", 1);
    OutboxRecord heldA = claimOne("r");
    clock.advance(LEASE.plusSeconds(1));
    List<OutboxRecord> mine = List.of(heldA, claimOne("r"));
    // A's lease ran out and another owner claimed it: A is left out and does not fail B
    store.recoverExpiredLeases(now());
    assertThat(claimOne("other").commandId()).isEqualTo(a.commandId());

    T rolledBack = beginTransaction(store);
    assertThat(store.markSending(rolledBack, mine, now().plus(LEASE), now()))
        .extracting(OutboxRecord::commandId).containsExactly(b.commandId());
    rollback(rolledBack);
    assertThat(store.find(b.commandId()).orElseThrow().status()).isEqualTo(Status.CLAIMED);

    clock.advance(Duration.ofMillis(1500)); // marked later than claimed: both times move on
    T committed = beginTransaction(store);
    List<OutboxRecord> sending = store.markSending(committed, mine, now().plus(LEASE), now());
    commit(committed);
    assertThat(sending).singleElement().satisfies(r -> {
      assertThat(r.commandId()).isEqualTo(b.commandId());
      assertThat(r.status()).isEqualTo(Status.SENDING);
      assertThat(r.leaseExpiresAt()).isEqualTo(now().plus(LEASE));
      // what the caller gets back is the row as stored, column for column
      assertThat(r).usingRecursiveComparison().isEqualTo(store.find(b.commandId()).orElseThrow());
    });
    assertThat(store.auditTrail(b.commandId())).extracting(OutboxStore.AuditEntry::to)
        .containsExactly(Status.CLAIMED, Status.SENDING);
    assertThat(store.auditTrail(a.commandId())).extracting(OutboxStore.AuditEntry::to)
        .as("the lost claim is not marked").doesNotContain(Status.SENDING);
    OutboxRecord lost = store.find(a.commandId()).orElseThrow();
    assertThat(lost.status()).isEqualTo(Status.CLAIMED);
    assertThat(lost.claimOwner()).isEqualTo("other");
  }

  @Test
  void claimingInTheCallersTransactionHoldsTheRowsOnlyOnceItCommits() {
    OutboxRecord a1 = accept("A", 1);
    accept("A", 2);
    OutboxRecord b1 = accept("B", 1);

    T rolledBack = beginTransaction(store);
    assertThat(store.claim(rolledBack, "r", LEASE, 10, now()))
        .extracting(OutboxRecord::commandId).containsExactly(a1.commandId(), b1.commandId());
    rollback(rolledBack);
    assertThat(store.find(a1.commandId()).orElseThrow().status()).isEqualTo(Status.QUEUED);
    assertThat(store.auditTrail(a1.commandId())).isEmpty();

    T committed = beginTransaction(store);
    List<OutboxRecord> claimed = store.claim(committed, "r", LEASE, 10, now());
    // marked sending in the same transaction, as the replayer does with the rows it sends now
    List<OutboxRecord> sending = store.markSending(committed, claimed.subList(0, 1),
        now().plus(LEASE), now());
    commit(committed);
    assertThat(claimed).extracting(OutboxRecord::commandId)
        .containsExactly(a1.commandId(), b1.commandId());
    assertThat(claimed).allSatisfy(r -> {
      assertThat(r.status()).isEqualTo(Status.CLAIMED);
      assertThat(r.claimOwner()).isEqualTo("r");
    });
    assertThat(sending).extracting(OutboxRecord::commandId).containsExactly(a1.commandId());
    assertThat(store.auditTrail(a1.commandId())).extracting(OutboxStore.AuditEntry::to)
        .containsExactly(Status.CLAIMED, Status.SENDING);
    assertThat(store.auditTrail(b1.commandId())).singleElement().satisfies(entry -> {
      assertThat(entry.from()).isEqualTo(Status.QUEUED);
      assertThat(entry.to()).isEqualTo(Status.CLAIMED);
      assertThat(entry.fencingToken()).isEqualTo(claimed.get(1).fencingToken());
    });
    assertThat(sending.get(0)).usingRecursiveComparison()
        .isEqualTo(store.find(a1.commandId()).orElseThrow());
    assertThat(store.find(b1.commandId()).orElseThrow().status()).isEqualTo(Status.CLAIMED);
    assertThat(store.claim("other", LEASE, 10, now())).as("A's second waits behind its first")
        .isEmpty();
    T blank = beginTransaction(store);
    try {
      assertThatThrownBy(() -> store.claim(blank, " ", LEASE, 1, now()))
          .isInstanceOf(IllegalArgumentException.class);
    } finally {
      rollback(blank);
    }
  }

  @Test
  void nextDueAtIsTheEarliestNextAttemptOrLeaseEndAndEmptyWhenAllIsDone() {
    assertThat(store.nextDueAt()).isEmpty();
    OutboxRecord accepted = accept("note-1", 1);
    assertThat(store.nextDueAt()).contains(accepted.nextAttemptAt());
    OutboxRecord held = claimOne("A");
    assertThat(store.nextDueAt()).contains(held.leaseExpiresAt());
    store.complete(accepted.commandId(), held.fencingToken(), Status.CLAIMED,
        Outcome.acked(null), now());
    assertThat(store.nextDueAt()).isEmpty();
  }

  @Test
  void workInAStoreTransactionCommitsTogetherOrRollsBackTogether() {
    OutboxRecord accepted = accept("note-1", 1);
    OutboxRecord held = claimOne("A");
    assertThatThrownBy(() -> store.inTransaction(tx -> {
      store.complete(tx, accepted.commandId(), held.fencingToken(), Status.CLAIMED,
          Outcome.acked(null), now());
      throw new IllegalStateException("local state update failed");
    })).isInstanceOf(IllegalStateException.class);
    assertThat(store.find(accepted.commandId()).orElseThrow().status()).isEqualTo(Status.CLAIMED);
    OutboxRecord acked = store.inTransaction(tx -> store.complete(tx, accepted.commandId(),
        held.fencingToken(), Status.CLAIMED, Outcome.acked(null), now()));
    assertThat(acked.status()).isEqualTo(Status.ACKED);
    assertThat(store.find(accepted.commandId()).orElseThrow().status()).isEqualTo(Status.ACKED);
  }

  @Test
  void theNextCommandOfASendingEntityIsClaimedInTheCallersTransactionOnlyOnceItCommits() {
    OutboxRecord a1 = accept("A", 1);
    OutboxRecord a2 = accept("A", 2);
    accept("A", 3);
    OutboxRecord b1 = accept("B", 1);
    List<OutboxRecord> heads = store.claim("r", LEASE, 10, now());
    assertThat(heads).extracting(OutboxRecord::commandId)
        .containsExactly(a1.commandId(), b1.commandId());
    OutboxRecord sending = store.markSending(a1.commandId(), heads.get(0).fencingToken(),
        now().plus(LEASE), now());

    T rolledBack = beginTransaction(store);
    assertThat(store.claimNextOfEntity(rolledBack, "r", LEASE, sending, 0, now()))
        .map(OutboxRecord::commandId).contains(a2.commandId());
    rollback(rolledBack);
    assertThat(store.find(a2.commandId()).orElseThrow().status()).isEqualTo(Status.QUEUED);
    assertThat(store.auditTrail(a2.commandId())).isEmpty();

    T committed = beginTransaction(store);
    OutboxRecord next = store.claimNextOfEntity(committed, "r", LEASE, sending, 0, now())
        .orElseThrow();
    commit(committed);
    assertThat(next.commandId()).isEqualTo(a2.commandId());
    assertThat(next.status()).isEqualTo(Status.CLAIMED);
    assertThat(next.claimOwner()).isEqualTo("r");
    assertThat(next.leaseExpiresAt()).isEqualTo(now().plus(LEASE));
    assertThat(next.fencingToken()).isGreaterThan(heads.get(1).fencingToken());
    assertThat(store.find(a2.commandId()).orElseThrow()).isEqualTo(next);
    assertThat(store.auditTrail(a2.commandId())).extracting(OutboxStore.AuditEntry::to)
        .containsExactly(Status.CLAIMED);

    assertThat(successor(sending, 0, now()))
        .as("the command right after A1 is held already; A3 is not its successor").isEmpty();
    store.complete(a1.commandId(), sending.fencingToken(), Status.SENDING, Outcome.acked(null),
        now());
    assertThat(successor(sending, 0, now())).as("A1 is no longer sending under its token")
        .isEmpty();
    assertThat(store.find(b1.commandId()).orElseThrow().status()).isEqualTo(Status.CLAIMED);
  }

  @Test
  void aSuccessorIsOnlyANeverAttemptedDueCommandOfTheCurrentSessionOrALaterOne() {
    OutboxRecord a1 = accept("A", 1);
    OutboxRecord a2 = accept("A", 2);
    OutboxRecord head = claimOne("r");
    assertThat(head.commandId()).isEqualTo(a1.commandId());
    OutboxRecord sending = store.markSending(a1.commandId(), head.fencingToken(),
        now().plus(LEASE), now());
    assertThat(successor(sending, 1, now()))
        .as("A2 was accepted under session 0, older than the current 1").isEmpty();
    assertThat(successor(sending, 0, a2.nextAttemptAt().minusMillis(1)))
        .as("A2 is not due yet").isEmpty();
    assertThat(successor(sending, 0, now())).map(OutboxRecord::commandId)
        .as("due, never attempted, session 0").contains(a2.commandId());

    T claiming = beginTransaction(store);
    OutboxRecord taken = store.claimNextOfEntity(claiming, "r", LEASE, sending, 0, now())
        .orElseThrow();
    commit(claiming);
    store.complete(a2.commandId(), taken.fencingToken(), Status.CLAIMED,
        Outcome.retryable(now(), new ErrorInfo("http_503", "busy", now())), now());
    assertThat(store.find(a2.commandId()).orElseThrow().status())
        .isEqualTo(Status.RETRYABLE_FAILED);
    assertThat(successor(sending, 0, now()))
        .as("A2 was attempted: it goes out as a head, on its own retry time").isEmpty();
    assertThat(store.claim("r", LEASE, 10, now())).as("A1 is still open: A2 waits behind it")
        .isEmpty();
    store.complete(a1.commandId(), sending.fencingToken(), Status.SENDING, Outcome.acked(null),
        now());
    assertThat(store.claim("r", LEASE, 10, now())).extracting(OutboxRecord::commandId)
        .as("A1 ended: A2 is its entity's head, due now").containsExactly(a2.commandId());
  }

  /** What {@code claimNextOfEntity} takes behind {@code sending}, rolled back. */
  private Optional<OutboxRecord> successor(OutboxRecord sending, long sessionVersion,
      Instant at) {
    T transaction = beginTransaction(store);
    try {
      return store.claimNextOfEntity(transaction, "r", LEASE, sending, sessionVersion, at);
    } finally {
      rollback(transaction);
    }
  }

  @Test
  void endedCommandsBecomeTombstonesThatStillDeduplicateAndAreDeletedOnlyAsTombstones() {
    OutboxRecord acked = accept("A", 1);
    OutboxRecord held = claimOne("r");
    store.complete(acked.commandId(), held.fencingToken(), Status.CLAIMED, Outcome.acked(
        new StoredResponse(201, "{\"applied\":true}".getBytes())), now());
    OutboxRecord rejected = accept("B", 1);
    OutboxRecord heldB = claimOne("r");
    store.complete(rejected.commandId(), heldB.fencingToken(), Status.CLAIMED,
        Outcome.rejected(new ErrorInfo("http_422", "no milk for note B", now()), null), now());
    OutboxRecord open = accept("C", 1);
    clock.advance(Duration.ofHours(2));
    OutboxRecord endedLater = accept("D", 1);
    OutboxRecord heldD = store.claim("r", LEASE, 10, now()).stream()
        .filter(r -> r.commandId().equals(endedLater.commandId())).findFirst().orElseThrow();
    store.complete(endedLater.commandId(), heldD.fencingToken(), Status.CLAIMED,
        Outcome.acked(null), now());

    assertThat(store.tombstoneEnded(now().minus(Duration.ofHours(1)), now())).isEqualTo(2);
    OutboxRecord tomb = store.find(acked.commandId()).orElseThrow();
    assertThat(tomb.status()).isEqualTo(Status.ACKED);
    assertThat(tomb.payload().retained()).isFalse();
    assertThat(tomb.payload().sha256Hex()).isEqualTo(acked.payload().sha256Hex());
    assertThat(tomb.idempotencyKey()).isEqualTo(acked.idempotencyKey());
    assertThat(tomb.response().status()).isEqualTo(201);
    assertThat(tomb.response().body()).isEmpty();
    OutboxRecord rejectedTomb = store.find(rejected.commandId()).orElseThrow();
    assertThat(rejectedTomb.lastError().code()).isEqualTo("http_422");
    assertThat(rejectedTomb.lastError().message()).doesNotContain("milk");
    assertThat(store.find(open.commandId()).orElseThrow().payload().retained()).isTrue();
    assertThat(store.find(endedLater.commandId()).orElseThrow().payload().retained())
        .as("ended after the cut-off").isTrue();
    assertThat(store.tombstoneEnded(now().minus(Duration.ofHours(1)), now()))
        .as("nothing left to tombstone").isZero();

    // the same id and content: the tombstone, nothing new; other content: refused
    assertThat(outbox.accept(OutboxCommand.of("note.put", "A", Map.of("n", 1))
        .withCommandId(acked.commandId())).commandId()).isEqualTo(acked.commandId());
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("note.put", "A", Map.of("n", 2))
        .withCommandId(acked.commandId()))).isInstanceOf(IdempotencyConflictException.class);
    assertThatThrownBy(() -> store.requeue(rejected.commandId(), now()))
        .isInstanceOf(IllegalStateException.class);

    clock.advance(Duration.ofDays(3));
    assertThat(store.deleteTombstones(now().minus(Duration.ofDays(4)))).as("none that old")
        .isZero();
    assertThat(store.deleteTombstones(now())).as("the two tombstones, not D").isEqualTo(2);
    assertThat(store.find(acked.commandId())).isEmpty();
    assertThat(store.auditTrail(acked.commandId())).isEmpty();
    assertThat(store.find(endedLater.commandId())).as("ended, not a tombstone").isPresent();
    assertThat(store.find(open.commandId())).isPresent();
    // past its deletion the id is free again: an accept with it is a new command
    OutboxRecord anew = outbox.accept(OutboxCommand.of("note.put", "A", Map.of("n", 1))
        .withCommandId(acked.commandId()));
    assertThat(anew.status()).isEqualTo(Status.QUEUED);
  }

  @Test
  void theOldestOpenCommandIsTheEarliestAcceptNotYetEnded() {
    assertThat(store.oldestOpenAcceptedAt()).isEmpty();
    Instant first = now();
    OutboxRecord a = accept("A", 1);
    clock.advance(Duration.ofHours(1));
    OutboxRecord b = accept("B", 1);
    assertThat(store.oldestOpenAcceptedAt()).contains(first);
    OutboxRecord held = store.claim("r", LEASE, 10, now()).stream()
        .filter(r -> r.commandId().equals(a.commandId())).findFirst().orElseThrow();
    assertThat(store.oldestOpenAcceptedAt()).as("claimed is still open").contains(first);
    store.complete(a.commandId(), held.fencingToken(), Status.CLAIMED, Outcome.acked(null),
        now());
    assertThat(store.oldestOpenAcceptedAt()).contains(b.createdAt());
    OutboxRecord heldB = store.find(b.commandId()).orElseThrow();
    store.complete(b.commandId(), heldB.fencingToken(), Status.CLAIMED,
        Outcome.rejected(error("http_400"), null), now());
    assertThat(store.oldestOpenAcceptedAt()).isEmpty();
  }

  @Test
  void eightThreadsClaimingTenThousandRowsGetEachRowExactlyOnce() throws Exception {
    int rows = 10_000;
    for (int start = 0; start < rows; start += 1_000) {
      List<OutboxCommand> chunk = new ArrayList<>();
      for (int i = start; i < start + 1_000; i++) {
        chunk.add(OutboxCommand.of("note.put", "entity-" + i, Map.of("n", i)));
      }
      outbox.acceptAll(chunk);
    }
    ConcurrentLinkedQueue<CommandId> handedOut = new ConcurrentLinkedQueue<>();
    AtomicInteger busyRefusals = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        String owner = "replayer-" + t;
        workers.add(pool.submit(() -> {
          while (store.countByStatus().get(Status.QUEUED) > 0) {
            try {
              for (OutboxRecord r : store.claim(owner, Duration.ofHours(1), 50, now())) {
                handedOut.add(r.commandId());
              }
            } catch (OutboxStorageException e) {
              // a claim that waited out the busy timeout behind the other seven is refused as
              // retryable and claimed nothing; a replayer's next pass claims again, as here
              if (!e.retryable()) {
                throw e;
              }
              busyRefusals.incrementAndGet();
            }
          }
          return null;
        }));
      }
      for (Future<?> worker : workers) {
        worker.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.printf("8 threads claimed %d rows; %d claims refused as busy and retried%n",
        handedOut.size(), busyRefusals.get());
    Set<CommandId> distinct = new HashSet<>(handedOut);
    assertThat(handedOut).hasSize(rows);
    assertThat(distinct).hasSize(rows);
    assertThat(store.countByStatus().get(Status.CLAIMED)).isEqualTo(rows);
  }

  private OutboxRecord claimOne(String owner) {
    List<OutboxRecord> claimed = store.claim(owner, LEASE, 1, now());
    assertThat(claimed).as("claim by %s at %s", owner, now()).hasSize(1);
    return claimed.get(0);
  }

  private long total() {
    return store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
  }

  private ErrorInfo error(String code) {
    return new ErrorInfo(code, code, now());
  }
}
