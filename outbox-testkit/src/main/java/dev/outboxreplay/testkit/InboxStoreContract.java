package dev.outboxreplay.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.InboxConsumerException;
import dev.outboxreplay.InboxEntry;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.InboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
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
 * Behaviour every {@link InboxStore} must have. A store module subclasses this once and supplies
 * how to open and close its store, and how the consumer's own effect is written inside the
 * consume transaction and counted; all tests then run against it.
 *
 * @param <T> the store's transaction handle
 */
public abstract class InboxStoreContract<T> {
  @TempDir protected Path directory;
  protected ManualClock clock;
  protected InboxStore<T> store;

  /** Opens (or reopens) a store whose data lives in {@code directory}, with an effect table. */
  protected abstract InboxStore<T> openStore(Path directory);

  /** Closes the store and everything it holds, as a process exit would. */
  protected abstract void closeStore(InboxStore<T> store);

  /** Writes one row of the consumer's own effect, in {@code transaction}. */
  protected abstract void writeEffect(T transaction, String what) throws Exception;

  /** The committed effect rows of {@code what}. */
  protected abstract long effects(String what);

  @BeforeEach
  void openContractStore() {
    clock = ManualClock.startingAtEpoch2026();
    store = openStore(directory);
  }

  @AfterEach
  void closeContractStore() {
    closeStore(store);
  }

  private Instant now() {
    return clock.instant();
  }

  private static InboxMessage message(String id, String text) {
    return new InboxMessage("alice", id, text.getBytes(StandardCharsets.UTF_8));
  }

  /** Consumes {@code m}: writes its effect and stages {@code result}. */
  private Optional<InboxEntry> consume(InboxMessage m, byte[] result) {
    return store.consumeOnce(m, now(), tx -> {
      writeEffect(tx, m.messageId());
      return result;
    });
  }

  @Test
  void theFirstDeliveryRunsTheWorkOnceAndStagesItsResultWithItsEffect() {
    InboxMessage m = message("m1", "hello");
    AtomicInteger runs = new AtomicInteger();
    Optional<InboxEntry> first = store.consumeOnce(m, now(), tx -> {
      runs.incrementAndGet();
      writeEffect(tx, "m1");
      return "result".getBytes(StandardCharsets.UTF_8);
    });
    assertThat(first).hasValueSatisfying(e -> {
      assertThat(e.state()).isEqualTo(InboxEntry.State.STAGED);
      assertThat(e.stagedResult()).asString(StandardCharsets.UTF_8).isEqualTo("result");
      assertThat(e.messageSha256()).isEqualTo(m.sha256());
      assertThat(e.consumedAt()).isEqualTo(now());
      assertThat(e.projectedAt()).isNull();
    });
    InboxEntry stored = store.find("alice", "m1").orElseThrow();
    assertThat(stored.state()).isEqualTo(InboxEntry.State.STAGED);
    assertThat(stored.stagedResult()).isEqualTo(first.get().stagedResult());
    assertThat(stored.messageSha256()).isEqualTo(m.sha256());

    clock.advance(Duration.ofMinutes(1));
    assertThat(store.consumeOnce(m, now(), tx -> {
      runs.incrementAndGet();
      writeEffect(tx, "m1");
      return new byte[0];
    })).as("a redelivery").isEmpty();
    assertThat(runs).hasValue(1);
    assertThat(effects("m1")).isEqualTo(1);
    assertThat(store.find("alice", "other")).isEmpty();
    assertThat(store.find("bob", "m1")).as("another scope").isEmpty();
  }

  @Test
  void aConsumerThatThrowsLeavesNeitherItsEffectNorAReservation() {
    InboxMessage m = message("m1", "hello");
    assertThatThrownBy(() -> store.consumeOnce(m, now(), tx -> {
      writeEffect(tx, "m1");
      throw new IllegalStateException("ratchet refused the message");
    })).isInstanceOf(InboxConsumerException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThat(store.find("alice", "m1")).isEmpty();
    assertThat(effects("m1")).isZero();
    assertThat(consume(m, new byte[] {1})).isPresent();
    assertThat(effects("m1")).isEqualTo(1);
  }

  @Test
  void projectingLeavesATombstoneThatStillRefusesTheMessageAndIsIdempotent() {
    InboxMessage m = message("m1", "hello");
    consume(m, new byte[] {1, 2, 3});
    clock.advance(Duration.ofSeconds(5));
    Instant projectedAt = now();
    store.markProjected("alice", "m1", now());
    clock.advance(Duration.ofSeconds(5));
    store.markProjected("alice", "m1", now());
    InboxEntry tomb = store.find("alice", "m1").orElseThrow();
    assertThat(tomb.state()).isEqualTo(InboxEntry.State.PROJECTED);
    assertThat(tomb.stagedResult()).as("dropped").isNull();
    assertThat(tomb.projectedAt()).as("the first projection's time").isEqualTo(projectedAt);
    assertThat(tomb.messageSha256()).isEqualTo(m.sha256());
    assertThat(consume(m, new byte[] {9})).isEmpty();
    assertThat(effects("m1")).isEqualTo(1);
    store.markProjected("alice", "never-consumed", now());
    assertThat(store.find("alice", "never-consumed")).as("nothing created").isEmpty();
  }

  @Test
  void aStagedRowWithoutItsResultMovesToIntegrityFailureOnceAndIsNeverConsumedAgain() {
    InboxMessage lost = message("lost", "hello");
    consume(lost, null);
    InboxMessage whole = message("whole", "world");
    consume(whole, new byte[] {1});
    assertThat(store.find("alice", "lost").orElseThrow().stagedResult()).isNull();

    assertThat(store.markIntegrityFailure("alice", "whole", now()))
        .as("a staged row with its result").isFalse();
    assertThat(store.markIntegrityFailure("alice", "lost", now())).isTrue();
    assertThat(store.markIntegrityFailure("alice", "lost", now())).as("once").isFalse();
    assertThat(store.markIntegrityFailure("alice", "unknown", now())).isFalse();
    assertThat(store.find("alice", "lost").orElseThrow().state())
        .isEqualTo(InboxEntry.State.INTEGRITY_FAILURE);
    assertThat(store.find("alice", "whole").orElseThrow().state())
        .isEqualTo(InboxEntry.State.STAGED);
    store.markProjected("alice", "lost", now());
    assertThat(store.find("alice", "lost").orElseThrow().state())
        .as("projection does not leave integrity failure")
        .isEqualTo(InboxEntry.State.INTEGRITY_FAILURE);
    assertThat(consume(lost, new byte[] {1})).isEmpty();
    assertThat(effects("lost")).isEqualTo(1);
    assertThat(store.list(InboxEntry.State.INTEGRITY_FAILURE, 10))
        .extracting(InboxEntry::messageId).containsExactly("lost");
  }

  @Test
  void redeliveriesWithOtherBytesAreCountedMostRecentFirstAndChangeNothingElse() {
    consume(message("a", "hello"), new byte[] {1});
    consume(message("b", "world"), new byte[] {2});
    clock.advance(Duration.ofSeconds(1));
    store.recordMismatch("alice", "a", now());
    clock.advance(Duration.ofSeconds(1));
    store.recordMismatch("alice", "b", now());
    clock.advance(Duration.ofSeconds(1));
    Instant lastA = now();
    store.recordMismatch("alice", "a", now());

    List<InboxStore.Mismatch> mismatches = store.listMismatches(10);
    assertThat(mismatches).extracting(InboxStore.Mismatch::messageId).containsExactly("a", "b");
    assertThat(mismatches.get(0).deliveries()).isEqualTo(2);
    assertThat(mismatches.get(0).lastAt()).isEqualTo(lastA);
    assertThat(mismatches.get(1).deliveries()).isEqualTo(1);
    assertThat(store.listMismatches(1)).hasSize(1);
    InboxEntry a = store.find("alice", "a").orElseThrow();
    assertThat(a.state()).isEqualTo(InboxEntry.State.STAGED);
    assertThat(a.stagedResult()).containsExactly(1);
  }

  @Test
  void rowsAreListedByStateOldestConsumedFirstUpToTheLimit() {
    for (int i = 0; i < 4; i++) {
      consume(message("m" + i, "text " + i), new byte[] {(byte) i});
      clock.advance(Duration.ofSeconds(1));
    }
    store.markProjected("alice", "m1", now());
    assertThat(store.list(InboxEntry.State.STAGED, 10)).extracting(InboxEntry::messageId)
        .containsExactly("m0", "m2", "m3");
    assertThat(store.list(InboxEntry.State.STAGED, 2)).extracting(InboxEntry::messageId)
        .containsExactly("m0", "m2");
    assertThat(store.list(InboxEntry.State.PROJECTED, 10)).extracting(InboxEntry::messageId)
        .containsExactly("m1");
    assertThat(store.list(InboxEntry.State.INTEGRITY_FAILURE, 10)).isEmpty();
  }

  @Test
  void onlyTombstonesProjectedBeforeTheCutOffArePrunedAndThenAreConsumedAnew() {
    consume(message("old", "a"), new byte[] {1});
    store.markProjected("alice", "old", now());
    consume(message("staged", "b"), new byte[] {2});
    consume(message("lost", "c"), null);
    store.markIntegrityFailure("alice", "lost", now());
    clock.advance(Duration.ofDays(1));
    consume(message("recent", "d"), new byte[] {3});
    store.markProjected("alice", "recent", now());

    assertThat(store.pruneTombstones(now().minus(Duration.ofDays(2)))).isZero();
    assertThat(store.pruneTombstones(now())).isEqualTo(1);
    assertThat(store.find("alice", "old")).isEmpty();
    assertThat(store.find("alice", "recent")).as("projected at the cut-off").isPresent();
    assertThat(store.pruneTombstones(now().plus(Duration.ofDays(30))))
        .as("never a staged row or an integrity failure").isEqualTo(1);
    assertThat(store.find("alice", "staged")).isPresent();
    assertThat(store.find("alice", "lost")).isPresent();
    assertThat(consume(message("old", "a"), new byte[] {1})).as("pruned: consumed anew")
        .isPresent();
    assertThat(effects("old")).isEqualTo(2);
  }

  @Test
  void rowsSurviveClosingAndReopeningTheStore() {
    consume(message("m1", "hello"), new byte[] {7});
    closeStore(store);
    store = openStore(directory);
    InboxEntry stored = store.find("alice", "m1").orElseThrow();
    assertThat(stored.state()).isEqualTo(InboxEntry.State.STAGED);
    assertThat(stored.stagedResult()).containsExactly(7);
    assertThat(consume(message("m1", "hello"), new byte[] {7})).isEmpty();
    assertThat(effects("m1")).isEqualTo(1);
  }

  @Test
  void eightThreadsDeliveringOneMessageTogetherRunTheWorkOnce() throws Exception {
    InboxMessage m = message("m1", "hello");
    int threads = 8;
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Optional<InboxEntry>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(pool.submit(() -> {
          start.await();
          return store.consumeOnce(m, now(), tx -> {
            runs.incrementAndGet();
            writeEffect(tx, "m1");
            return new byte[] {1};
          });
        }));
      }
      start.countDown();
      int consumed = 0;
      for (Future<Optional<InboxEntry>> f : results) {
        consumed += f.get(60, TimeUnit.SECONDS).isPresent() ? 1 : 0;
      }
      assertThat(consumed).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
    assertThat(runs).as("the work of a waiting delivery does not run").hasValue(1);
    assertThat(effects("m1")).isEqualTo(1);
  }
}
