package dev.outboxreplay.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import dev.outboxreplay.testkit.RefusingTransport;
import dev.outboxreplay.testkit.RevocableSession;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayerHealthMetricsTest {
  @TempDir Path dir;

  @Test
  void needsAttentionAndHeldFollowTheReplayersHealthReadAtMostOncePerMaxAge() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    RevocableSession session = new RevocableSession();
    RefusingTransport refusing = RefusingTransport.refusing(command -> true);
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
        session.revoke();
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
