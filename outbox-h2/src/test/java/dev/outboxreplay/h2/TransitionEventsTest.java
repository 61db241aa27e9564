package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.testkit.AckingTransport;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every transition a listener gets names the command's operation and entity, so a status line
 * can say what is syncing; lease recoveries too, whose audit holds neither.
 */
class TransitionEventsTest {
  @TempDir Path dir;

  @Test
  void claimsAcksAndLeaseRecoveriesCarryOperationAndEntity() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      outbox.accept(OutboxCommand.of("note.put", "note-7", Map.of("v", 1)));
      outbox.accept(OutboxCommand.of("note.delete", "note-8", Map.of("v", 2)));
      // a replayer that was killed holding note-7's lease
      assertThat(store.claim("killed", Duration.ofSeconds(30), 1, clock.instant())).hasSize(1);
      clock.advance(Duration.ofMinutes(1));

      List<OutboxListener.Transition> seen = new CopyOnWriteArrayList<>();
      try (Replayer<Connection> replayer = Replayer.builder(store, AckingTransport.acking())
          .clock(clock).listener(new OutboxListener() {
            @Override
            public void onTransition(Transition t) {
              seen.add(t);
            }
          }).build()) {
        replayer.runPass();
      }
      assertThat(seen).extracting(OutboxListener.Transition::reason)
          .contains(Reason.LEASE_EXPIRED_WHILE_CLAIMED, Reason.ACKED);
      assertThat(seen).allSatisfy(t -> assertThat(t.operation() + " " + t.entityKey())
          .isIn("note.put note-7", "note.delete note-8"));
      assertThat(seen).filteredOn(t -> t.reason() == Reason.LEASE_EXPIRED_WHILE_CLAIMED)
          .singleElement().satisfies(t -> {
            assertThat(t.operation()).isEqualTo("note.put");
            assertThat(t.entityKey()).isEqualTo("note-7");
          });
    }
  }
}
