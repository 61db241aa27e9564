package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.AckingTransport;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fault raised at {@link FailurePoint#AFTER_CLAIM} stands for a crash right after the claim
 * committed: it ends the pass, as a crash would. It must not be taken for a failed recording
 * transaction, which would record the pass's answers again and claim anew while the rows of the
 * committed claim are forgotten. Those rows, left claimed or sending, are replayed once their
 * lease runs out, each sent once.
 */
class AfterClaimFaultTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir Path dir;

  @Test
  void aFaultAfterTheClaimEndsThePassAndItsRowsAreReplayedOnceTheirLeaseEnds() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.builder().file(dir.resolve("app")).build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      List<CommandId> ids = new ArrayList<>();
      for (int n = 0; n < 3; n++) {
        ids.add(outbox.accept(OutboxCommand.of("note.put", "note-" + n, Map.of("n", n)))
            .commandId());
      }
      AtomicInteger faults = new AtomicInteger();
      FailureInjector faultOnce = point -> {
        if (point == FailurePoint.AFTER_CLAIM && faults.getAndIncrement() == 0) {
          throw new IllegalStateException("injected after the claim");
        }
      };
      Map<CommandId, Integer> sends = new ConcurrentHashMap<>();
      try (Replayer<Connection> replayer = Replayer.builder(store,
              AckingTransport.acking(r -> sends.merge(r.commandId(), 1, Integer::sum)))
          .clock(clock).lease(LEASE).concurrency(1).failureInjector(faultOnce).build()) {
        assertThatThrownBy(replayer::runPass).hasMessage("injected after the claim");
        assertThat(sends).as("sent in the pass the fault ended").isEmpty();
        assertThat(store.countByStatus().getOrDefault(Status.QUEUED, 0L))
            .as("left queued by the one claim").isZero();

        replayer.runPass();
        assertThat(sends).as("sent while the claim's lease runs").isEmpty();

        clock.advance(LEASE.plusSeconds(1));
        for (int pass = 0; pass < 5 && sends.size() < ids.size(); pass++) {
          replayer.runPass();
        }
        assertThat(store.countByStatus()).containsEntry(Status.ACKED, (long) ids.size());
        assertThat(sends).containsOnlyKeys(ids);
        assertThat(sends.values()).as("sends per command").containsOnly(1);
      }
    }
  }
}
