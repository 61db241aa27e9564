package dev.outboxreplay.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.receiver.Claim;
import dev.outboxreplay.receiver.IdempotencyRecord;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.receiver.KeyTakenOverException;
import dev.outboxreplay.receiver.RecordState;
import dev.outboxreplay.receiver.StoredAnswer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The IETF Idempotency-Key draft's semantics as a receiver's records must keep them, on one
 * node and across nodes sharing one database: the first request is processed once, a repeat
 * gets the stored answer byte for byte, another payload is told apart, concurrent first requests
 * leave exactly one owner, a failed request is processed again, a claim lasts a lease and is
 * taken over only after it, a completion under a taken-over claim commits nothing, and expired
 * keys are pruned in batches. A records implementation subclasses this once; every test then
 * runs against it. Time is passed in; nothing waits on the wall clock.
 *
 * @param <T> the store's transaction handle
 */
public abstract class IdempotencyRecordStoreContract<T> {
  /** The lease every store in these tests is opened with. */
  protected static final Duration LEASE = Duration.ofSeconds(30);
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  private static final Instant RETAINED = T0.plus(Duration.ofDays(7));

  @TempDir protected Path directory;

  /**
   * Opens a store on the shared database (made in {@code directory} or elsewhere) for node
   * {@code node}, with {@link #LEASE}; a second call for another node shares the same records.
   */
  protected abstract IdempotencyRecordStore<T> openStore(Path directory, String node);

  /** Closes what {@link #openStore} opened (all nodes), as a process exit would. */
  protected abstract void closeAll();

  /** Writes one row of the request's effect, {@code what}, in {@code transaction}. */
  protected abstract void writeEffect(T transaction, String what) throws Exception;

  /** The committed effect rows of {@code what}. */
  protected abstract long effects(String what);

  private IdempotencyRecordStore<T> a;
  private IdempotencyRecordStore<T> b;

  @BeforeEach
  void openNodes() {
    a = openStore(directory, "node-a");
    b = openStore(directory, "node-b");
  }

  @AfterEach
  void closeNodes() {
    closeAll();
  }

  private static byte[] hash(String payload) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(payload.getBytes(StandardCharsets.UTF_8));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  private Claim claim(IdempotencyRecordStore<T> node, String key, String payload, Instant now) {
    return node.claim("tenant-1", key, "note.put", hash(payload), now, RETAINED);
  }

  private StoredAnswer complete(IdempotencyRecordStore<T> node, Claim claim, String effect,
      Instant now) throws Exception {
    return node.complete((Claim.Owned) claim, tx -> {
      writeEffect(tx, effect);
      return new StoredAnswer(201, "application/json",
          ("{\"applied\":\"" + effect + "\"}").getBytes(StandardCharsets.UTF_8));
    }, now);
  }

  @Test
  void theFirstRequestOwnsItsKeyAndARepeatWhileItRunsFindsItStarted() {
    Claim first = claim(a, "k1", "p", T0);
    assertThat(first).isInstanceOf(Claim.Owned.class);
    for (IdempotencyRecordStore<T> node : List.of(a, b)) {
      Claim repeat = claim(node, "k1", "p", T0.plusSeconds(1));
      assertThat(repeat).isInstanceOf(Claim.Standing.class);
      IdempotencyRecord standing = ((Claim.Standing) repeat).record();
      assertThat(standing.state()).isEqualTo(RecordState.STARTED);
      assertThat(standing.samePayload(hash("p"))).isTrue();
    }
    assertThat(a.find("tenant-1", "k1")).get().extracting(IdempotencyRecord::state)
        .isEqualTo(RecordState.STARTED);
    assertThat(a.find("tenant-2", "k1")).as("keys are scoped by tenant").isEmpty();
    assertThat(a.claim("tenant-2", "k1", "note.put", hash("p"), T0, RETAINED))
        .isInstanceOf(Claim.Owned.class);
  }

  @Test
  void aCompletedRequestStoresItsAnswerByteForByteWithItsEffectAndRepeatsGetIt()
      throws Exception {
    Claim first = claim(a, "k1", "p", T0);
    byte[] body = {0, (byte) 0xff, '{', '}', (byte) 0xc3};
    StoredAnswer stored = a.complete((Claim.Owned) first, tx -> {
      writeEffect(tx, "e1");
      return new StoredAnswer(207, "application/x-custom; charset=binary", body);
    }, T0.plusSeconds(1));
    assertThat(stored.body()).isEqualTo(body);
    assertThat(effects("e1")).isEqualTo(1);
    for (IdempotencyRecordStore<T> node : List.of(a, b)) {
      Claim repeat = claim(node, "k1", "p", T0.plusSeconds(2));
      IdempotencyRecord record = ((Claim.Standing) repeat).record();
      assertThat(record.state()).isEqualTo(RecordState.COMMITTED);
      assertThat(record.answer().status()).isEqualTo(207);
      assertThat(record.answer().contentType()).isEqualTo("application/x-custom; charset=binary");
      assertThat(record.answer().body()).isEqualTo(body);
    }
    assertThat(effects("e1")).as("a repeat never runs the effect again").isEqualTo(1);
  }

  @Test
  void anotherPayloadWithTheSameKeyIsToldApartWhateverTheState() throws Exception {
    Claim first = claim(a, "k1", "p", T0);
    IdempotencyRecord started = ((Claim.Standing) claim(b, "k1", "other", T0)).record();
    assertThat(started.samePayload(hash("other"))).isFalse();
    a.fail((Claim.Owned) first, "handler_failed:IllegalStateException", T0);
    Claim afterFailure = claim(b, "k1", "other", T0.plusSeconds(1));
    assertThat(afterFailure).as("a failed key is not restarted with another payload")
        .isInstanceOf(Claim.Standing.class);
    Claim retry = claim(b, "k1", "p", T0.plusSeconds(2));
    complete(b, retry, "e1", T0.plusSeconds(2));
    IdempotencyRecord committed = ((Claim.Standing) claim(a, "k1", "other", T0.plusSeconds(3)))
        .record();
    assertThat(committed.state()).isEqualTo(RecordState.COMMITTED);
    assertThat(committed.samePayload(hash("other"))).isFalse();
    assertThat(effects("e1")).isEqualTo(1);
  }

  @Test
  void ofConcurrentFirstRequestsOnTwoNodesExactlyOneOwnsEachKey() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      for (int round = 0; round < 10; round++) {
        String key = "race-" + round;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Claim>> claims = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
          IdempotencyRecordStore<T> node = i % 2 == 0 ? a : b;
          claims.add(pool.submit(() -> {
            go.await();
            return claim(node, key, "p", T0);
          }));
        }
        go.countDown();
        int owners = 0;
        for (Future<Claim> c : claims) {
          if (c.get(60, TimeUnit.SECONDS) instanceof Claim.Owned) {
            owners++;
          }
        }
        assertThat(owners).as("owners of %s among 16 concurrent first requests", key)
            .isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void workThatThrowsCommitsNothingAndAFailedKeyIsProcessedAgainUnderALargerFence()
      throws Exception {
    Claim.Owned first = (Claim.Owned) claim(a, "k1", "p", T0);
    assertThatThrownBy(() -> a.complete(first, tx -> {
      writeEffect(tx, "half");
      throw new IllegalStateException("downstream unavailable");
    }, T0)).isInstanceOf(IllegalStateException.class);
    assertThat(effects("half")).as("the effect rolled back with the answer").isZero();
    a.fail(first, "handler_failed:IllegalStateException", T0);
    IdempotencyRecord failed = a.find("tenant-1", "k1").orElseThrow();
    assertThat(failed.state()).isEqualTo(RecordState.FAILED);
    assertThat(failed.error()).isEqualTo("handler_failed:IllegalStateException");

    Claim.Owned retry = (Claim.Owned) claim(b, "k1", "p", T0.plusSeconds(1));
    assertThat(retry.fence()).isGreaterThan(first.fence());
    assertThatThrownBy(() -> complete(a, first, "stale", T0.plusSeconds(1)))
        .as("the first claim is spent").isInstanceOf(KeyTakenOverException.class);
    complete(b, retry, "e1", T0.plusSeconds(2));
    assertThat(effects("stale")).isZero();
    assertThat(effects("e1")).isEqualTo(1);
  }

  @Test
  void aStartedKeyIsTakenOverOnlyAfterItsLeaseAndTheStalledOwnersCompletionCommitsNothing()
      throws Exception {
    Claim.Owned stalled = (Claim.Owned) claim(a, "k1", "p", T0);
    assertThat(claim(b, "k1", "p", T0.plus(LEASE).minusMillis(1)))
        .as("within the lease").isInstanceOf(Claim.Standing.class);
    IdempotencyRecord running = b.find("tenant-1", "k1").orElseThrow();
    assertThat(running.abandonedAt(T0.plus(LEASE).minusMillis(1))).isFalse();
    assertThat(running.abandonedAt(T0.plus(LEASE))).as("its lease ended").isTrue();
    CountDownLatch effectWritten = new CountDownLatch(1);
    CountDownLatch takenOver = new CountDownLatch(1);
    ExecutorService slowNode = Executors.newSingleThreadExecutor();
    try {
      Future<StoredAnswer> late = slowNode.submit(() -> a.complete(stalled, tx -> {
        writeEffect(tx, "from-a");
        effectWritten.countDown();
        assertThat(takenOver.await(60, TimeUnit.SECONDS)).isTrue();
        return new StoredAnswer(201, null, new byte[0]);
      }, T0.plus(LEASE).plusSeconds(5)));
      assertThat(effectWritten.await(60, TimeUnit.SECONDS)).isTrue();
      Claim.Owned taker = (Claim.Owned) claim(b, "k1", "p", T0.plus(LEASE));
      assertThat(taker.fence()).isGreaterThan(stalled.fence());
      complete(b, taker, "from-b", T0.plus(LEASE).plusSeconds(1));
      takenOver.countDown();
      assertThatThrownBy(() -> late.get(60, TimeUnit.SECONDS))
          .hasCauseInstanceOf(KeyTakenOverException.class);
    } finally {
      slowNode.shutdownNow();
    }
    assertThat(effects("from-a")).as("the stalled node's effect rolled back").isZero();
    assertThat(effects("from-b")).isEqualTo(1);
    IdempotencyRecord record = a.find("tenant-1", "k1").orElseThrow();
    assertThat(new String(record.answer().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"applied\":\"from-b\"}");
    a.fail(stalled, "late", T0.plus(LEASE).plusSeconds(6));
    assertThat(a.find("tenant-1", "k1").orElseThrow().state())
        .as("a late failure of a spent claim changes nothing").isEqualTo(RecordState.COMMITTED);
  }

  @Test
  void aStalledOwnerCannotCompleteOnceAnotherNodeTookTheKeyOverEvenBeforeItFinishes()
      throws Exception {
    Claim.Owned stalled = (Claim.Owned) claim(a, "k1", "p", T0);
    Claim.Owned taker = (Claim.Owned) claim(b, "k1", "p", T0.plus(LEASE));
    assertThatThrownBy(() -> complete(a, stalled, "from-a", T0.plus(LEASE).plusSeconds(1)))
        .isInstanceOf(KeyTakenOverException.class);
    assertThat(effects("from-a")).isZero();
    assertThat(a.find("tenant-1", "k1").orElseThrow().state()).isEqualTo(RecordState.STARTED);
    complete(b, taker, "from-b", T0.plus(LEASE).plusSeconds(2));
    assertThat(effects("from-b")).isEqualTo(1);
  }

  @Test
  void aRestartedNodeReleasesOnlyTheKeysItLeftStarted() {
    claim(a, "left-by-a", "p", T0);
    claim(b, "held-by-b", "p", T0);
    IdempotencyRecordStore<T> restartedA = openStore(directory, "node-a");
    assertThat(restartedA.releaseOwnStarted(T0.plusSeconds(1))).isEqualTo(1);
    assertThat(restartedA.find("tenant-1", "left-by-a").orElseThrow()
        .abandonedAt(T0.plusSeconds(1))).as("released: reconciled as failed").isTrue();
    assertThat(restartedA.find("tenant-1", "held-by-b").orElseThrow()
        .abandonedAt(T0.plusSeconds(1))).isFalse();
    assertThat(claim(restartedA, "left-by-a", "p", T0.plusSeconds(1)))
        .isInstanceOf(Claim.Owned.class);
    assertThat(claim(restartedA, "held-by-b", "p", T0.plusSeconds(1)))
        .as("another node's request in progress is not taken over")
        .isInstanceOf(Claim.Standing.class);
    assertThat(restartedA.releaseOwnStarted(T0.plusSeconds(2)))
        .as("the key it claimed again is its own, started").isEqualTo(1);
  }

  @Test
  void expiredKeysArePrunedInBatchesAndALiveClaimIsKept() throws Exception {
    Instant soon = T0.plusSeconds(60);
    for (int i = 0; i < 5; i++) {
      Claim c = a.claim("tenant-1", "done-" + i, "note.put", hash("p"), T0, soon);
      complete(a, c, "e" + i, T0);
    }
    a.claim("tenant-1", "abandoned", "note.put", hash("p"), T0, soon);
    Instant later = T0.plus(LEASE).plusSeconds(60);
    a.claim("tenant-1", "running", "note.put", hash("p"), later.minusSeconds(1), soon);
    a.claim("tenant-1", "fresh", "note.put", hash("p"), T0, RETAINED);
    assertThat(a.count()).isEqualTo(8);
    List<Integer> batches = new ArrayList<>();
    for (int deleted; (deleted = a.pruneExpired(later.plusSeconds(1), 2)) > 0; ) {
      batches.add(deleted);
    }
    assertThat(batches).containsExactly(2, 2, 2);
    assertThat(a.count()).isEqualTo(2);
    assertThat(a.find("tenant-1", "running")).as("its lease still runs").isPresent();
    assertThat(a.find("tenant-1", "fresh")).isPresent();
    assertThat(a.find("tenant-1", "done-0")).isEmpty();
    assertThat(claim(b, "done-0", "p", later.plusSeconds(2)))
        .as("a pruned key is seen as new").isInstanceOf(Claim.Owned.class);
  }
}
