package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxHealth;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a status line reads from {@link Replayer#health()}, on a real file and a manual clock. */
class OutboxHealthTest {
  @TempDir Path dir;

  @Test
  void openCountOldestAgeAttentionAndPauseAreWhatTheOutboxHolds() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    AtomicBoolean revoked = new AtomicBoolean();
    SessionRuntime session =
        () -> new SessionRuntime.Snapshot(HttpContract.DEFAULT_TENANT, 0, revoked.get(), null);
    // acks every command but the one of entity "refused", which the receiver rejects (400)
    Transport receiver = new Transport() {
      @Override
      public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot s) {
        boolean refuse = command.entityKey().equals("refused");
        return TransportResult.of(refuse ? TransportResult.Kind.REJECTED
            : TransportResult.Kind.ACKED, new StoredResponse(refuse ? 400 : 200, new byte[0]),
            refuse ? "400" : "200", refuse ? "bad request" : "ok");
      }

      @Override
      public Optional<Reconciliation> reconcile(OutboxRecord c, SessionRuntime.Snapshot s) {
        return Optional.empty();
      }
    };
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

        revoked.set(true);
        OutboxHealth paused = replayer.health();
        assertThat(paused.pausedReason()).contains(Reason.SESSION_REVOKED);
        assertThat(paused.at()).isEqualTo(clock.instant());
      }
    }
  }
}
