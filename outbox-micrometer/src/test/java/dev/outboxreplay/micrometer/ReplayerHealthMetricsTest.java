package dev.outboxreplay.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayerHealthMetricsTest {
  @TempDir Path dir;

  @Test
  void needsAttentionAndHeldFollowTheReplayersHealthReadAtMostOncePerMaxAge() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    AtomicBoolean revoked = new AtomicBoolean();
    SessionRuntime session =
        () -> new SessionRuntime.Snapshot(HttpContract.DEFAULT_TENANT, 0, revoked.get(), null);
    Transport refusing = new Transport() {
      @Override
      public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot s) {
        return TransportResult.of(TransportResult.Kind.REJECTED,
            new StoredResponse(400, new byte[0]), "400", "bad request");
      }

      @Override
      public Optional<Reconciliation> reconcile(OutboxRecord c, SessionRuntime.Snapshot s) {
        return Optional.empty();
      }
    };
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      outbox.accept(OutboxCommand.of("note.put", "n1", Map.of("v", 1)));
      try (Replayer<Connection> replayer = Replayer.builder(store, refusing).clock(clock)
          .session(session).build()) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ReplayerHealthMetrics.of(replayer, clock, Duration.ofSeconds(5)).bindTo(registry);
        assertThat(registry.get("outbox.needs.attention").gauge().value()).isZero();
        assertThat(registry.get("outbox.replay.held").tag("reason", "session_revoked").gauge()
            .value()).isZero();

        replayer.runPass();
        revoked.set(true);
        assertThat(registry.get("outbox.needs.attention").gauge().value())
            .as("read less than 5 s ago: the earlier health").isZero();
        clock.advance(Duration.ofSeconds(5));
        assertThat(registry.get("outbox.needs.attention").gauge().value()).isEqualTo(1);
        assertThat(registry.get("outbox.replay.held").tag("reason", "session_revoked").gauge()
            .value()).isEqualTo(1);
        assertThat(registry.get("outbox.replay.held").tag("reason", "offline").gauge().value())
            .isZero();
      }
    }
  }
}
