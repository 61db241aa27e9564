package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.TransportResult.Kind;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine against a receiver that implements only the IETF Idempotency-Key draft: no
 * reconciliation endpoint, a stored response on repeat, 409 while in progress. Real OkHttp over
 * loopback, a real H2 file reopened by each "life" of the replaying side; time is a manual clock.
 */
class DraftReceiverReplayTest {
  @TempDir Path dir;

  @Test
  void thousandCommandsWithCutResponsesAndThreeRestartsAreEachAppliedOnceInOrder()
      throws Exception {
    long seed = Seeds.seed("draft.seed", "draft-receiver");
    SplittableRandom random = new SplittableRandom(seed);
    ManualClock clock = ManualClock.startingAtEpoch2026();
    Path file = dir.resolve("client");
    List<OutboxRecord> accepted = new ArrayList<>();
    try (DraftReceiver receiver = new DraftReceiver(() -> {
      synchronized (random) {
        return random.nextInt(5) == 0; // one response in five is lost after the commit
      }
    })) {
      try (H2Database db = H2Database.open(file)) {
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).clock(clock).build();
        for (int seq = 0; seq < 50; seq++) {
          for (int e = 0; e < 20; e++) {
            accepted.add(outbox.accept(OutboxCommand.of("note.put", "entity-" + e,
                Map.of("entity", "entity-" + e, "seq", seq))));
          }
        }
      }
      List<OkHttpTransport> transports = new ArrayList<>();
      for (int life = 0; life < 4; life++) {
        boolean lastLife = life == 3;
        // each earlier life "crashes" one sender between the answer and its record
        AtomicInteger sendsBeforeCrash = new AtomicInteger(lastLife ? -1 : 50 + 100 * life);
        try (H2Database db = H2Database.open(file)) {
          H2OutboxStore store = H2OutboxStore.create(db);
          OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(receiver.baseUrl()))
              .clock(clock).callTimeout(Duration.ofSeconds(10))
              .classify(409, Kind.IN_PROGRESS) // this receiver's 409 only means in progress
              .build();
          transports.add(transport);
          try (Replayer<Connection> replayer = Replayer.builder(store, transport)
              .clock(clock).concurrency(8).batchSize(20).lease(Duration.ofSeconds(30))
              .retryPolicy(RetryPolicy.builder().random(new SplittableRandom(seed))
                  .maxInterval(Duration.ofMinutes(1)).build())
              .failureInjector(point -> {
                if (point == FailurePoint.AFTER_RESPONSE_BEFORE_ACK
                    && sendsBeforeCrash.decrementAndGet() == 0) {
                  throw new IllegalStateException("simulated crash after the response");
                }
              }).build()) {
            for (int pass = 0; pass < (lastLife ? 300 : 6); pass++) {
              replayer.runPass();
              clock.advance(Duration.ofMinutes(2));
              if (lastLife && store.countByStatus().get(Status.ACKED) == accepted.size()) {
                break;
              }
            }
          }
          if (lastLife) {
            assertThat(store.countByStatus().get(Status.ACKED)).as("seed %d", seed)
                .isEqualTo(1000);
            long resentAfterUnknown = accepted.stream()
                .filter(r -> store.auditTrail(r.commandId()).stream()
                    .anyMatch(e -> e.reason() == Reason.OUTCOME_UNKNOWN
                        || e.reason() == Reason.LEASE_EXPIRED_WHILE_SENDING))
                .count();
            assertThat(resentAfterUnknown).as("rows whose outcome was unknown, then resent")
                .isGreaterThan(100);
          }
        }
      }
      assertThat(transports).as("the missing endpoint was found and remembered")
          .anyMatch(t -> !t.reconciliationAvailable());
      assertThat(receiver.notFound).as("lookups in flight before the first 404, per life")
          .hasValueBetween(1, 4 * 8);
      assertThat(receiver.keysAppliedMoreThanOnce()).as("seed %d", seed).isZero();
      for (OutboxRecord r : accepted) {
        assertThat(receiver.effects(r.idempotencyKey().value())).isEqualTo(1);
      }
      List<Long> inOrder = LongStream.range(0, 50).boxed().toList();
      for (int e = 0; e < 20; e++) {
        assertThat(receiver.arrivalOrder("entity-" + e)).as("entity-%d, seed %d", e, seed)
            .isEqualTo(inOrder);
      }
    }
  }
}
