package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replayer acking its rows while another one recovers their expired leases, on real threads:
 * for each row, at most one of them may win. The fuzzed simulator found a command acked, then
 * recovered from {@code sending} with the same token, resent, and its answer applied twice; here
 * one range UPDATE of the recovery recovered 46 of 2,400 rows an ack had already committed (H2
 * 2.5.252). The recovery now updates row by row, fenced by status and token.
 */
class AckRecoveryRaceTest {
  @TempDir Path dir;

  @Test
  void anAckAndALeaseRecoveryNeverBothWinARow() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("race")).multiProcess(false)
        .build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      ManualClock clock = ManualClock.startingAtEpoch2026();
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      Instant start = clock.instant();
      List<String> bothWon = new ArrayList<>();
      for (int round = 0; round < 30; round++) {
        Instant now = start.plusSeconds(round * 1000L);
        for (int k = 0; k < 40; k++) {
          outbox.accept(OutboxCommand.of("note.put", "r" + round + "-e" + k, Map.of("k", k)));
        }
        List<OutboxRecord> sending = new ArrayList<>();
        for (OutboxRecord c : store.claim("a", Duration.ofSeconds(30), 100, now)) {
          sending.add(store.markSending(c.commandId(), c.fencingToken(), now.plusSeconds(30),
              now));
        }
        Set<CommandId> acked = ConcurrentHashMap.newKeySet();
        Set<CommandId> recovered = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        Thread acker = new Thread(() -> {
          await(go);
          for (OutboxRecord r : sending) {
            try {
              store.inTransaction(tx -> store.complete(tx, r.commandId(), r.fencingToken(),
                  Status.SENDING, Outcome.acked(new StoredResponse(200, new byte[0])),
                  now.plusSeconds(1)));
              acked.add(r.commandId());
            } catch (FencedOffException e) {
              // the recovery won this row
            }
          }
        });
        Thread recoverer = new Thread(() -> {
          await(go);
          for (int k = 0; k < 5; k++) {
            store.recoverExpiredLeases(now.plusSeconds(31))
                .forEach(a -> recovered.add(a.command().commandId()));
          }
        });
        acker.start();
        recoverer.start();
        go.countDown();
        acker.join();
        recoverer.join();
        for (CommandId id : acked) {
          if (recovered.contains(id)) {
            bothWon.add(id + ": " + store.auditTrail(id));
          }
        }
        assertThat(acked.size() + recovered.size()).as("every row went one way")
            .isEqualTo(sending.size());
      }
      assertThat(bothWon).as("rows both acked and recovered").isEmpty();
    }
  }

  private static void await(CountDownLatch go) {
    try {
      go.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
