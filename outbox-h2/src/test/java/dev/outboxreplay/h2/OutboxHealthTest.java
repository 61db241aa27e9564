package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxHealth;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.ManualClock;
import dev.outboxreplay.testkit.RefusingTransport;
import dev.outboxreplay.testkit.RevocableSession;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a status line reads from {@link Replayer#health()}, on a real file and a manual clock. */
class OutboxHealthTest {
  @TempDir Path dir;

  @Test
  void openCountOldestAgeAttentionAndPauseAreWhatTheOutboxHolds() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    RevocableSession session = new RevocableSession();
    // acks every command but the one of entity "refused", which the receiver rejects (400)
    RefusingTransport receiver =
        RefusingTransport.refusing(command -> command.entityKey().equals("refused"));
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      try (Replayer<Connection> replayer = Replayer.builder(store, receiver).clock(clock)
          .session(session).build()) {
        OutboxHealth empty = replayer.health();
        assertThat(empty.open()).isZero();
        assertThat(empty.oldestOpenAge()).isEmpty();
        assertThat(empty.allDelivered()).isTrue();

        outbox.accept(OutboxCommand.of("note.put", "n1", Map.of("v", 1)));
        clock.advance(Duration.ofMinutes(2));
        outbox.accept(OutboxCommand.of("note.put", "refused", Map.of("v", 2)));
        outbox.accept(OutboxCommand.of("note.put", "n2", Map.of("v", 3)));
        clock.advance(Duration.ofMinutes(3));
        OutboxHealth waiting = replayer.health();
        assertThat(waiting.open()).isEqualTo(3);
        assertThat(waiting.counts()).containsEntry(Status.QUEUED, 3L);
        assertThat(waiting.oldestOpenAge()).contains(Duration.ofMinutes(5));
        assertThat(waiting.needsAttention()).isZero();
        assertThat(waiting.pausedReason()).isEmpty();
        assertThat(waiting.allDelivered()).isFalse();

        replayer.runPass();
        OutboxHealth after = replayer.health();
        assertThat(after.open()).isZero();
        assertThat(after.oldestOpenAge()).isEmpty();
        assertThat(after.counts()).containsEntry(Status.ACKED, 2L)
            .containsEntry(Status.REJECTED, 1L);
        assertThat(after.needsAttention()).isEqualTo(1);
        assertThat(after.allDelivered()).isFalse();

        session.revoke();
        OutboxHealth paused = replayer.health();
        assertThat(paused.pausedReason()).contains(Reason.SESSION_REVOKED);
        assertThat(paused.at()).isEqualTo(clock.instant());
      }
    }
  }
}
