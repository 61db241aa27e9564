package dev.outboxreplay.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2InboxStore;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.AckingTransport;
import dev.outboxreplay.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The binders against a real H2 outbox and inbox and a SimpleMeterRegistry. */
class MetricsTest {
  @TempDir Path dir;

  @Test
  void outboxGaugesCountersAndTimersFollowAReplay() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock)
          .random(new SplittableRandom(1)).build();
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      OutboxMetrics metrics = OutboxMetrics.of(store, clock, Duration.ZERO);
      metrics.bindTo(registry);
      for (int i = 0; i < 3; i++) {
        outbox.accept(OutboxCommand.of("note.put", "note-" + i, Map.of("n", i)));
      }
      clock.advance(Duration.ofSeconds(90));
      assertThat(registry.get("outbox.commands").tag("status", "queued").gauge().value())
          .isEqualTo(3);
      assertThat(registry.get("outbox.oldest.open.age").gauge().value()).isEqualTo(90);

      // each request takes 250 ms of the clock
      AckingTransport slowAck =
          AckingTransport.acking(command -> clock.advance(Duration.ofMillis(250)));
      try (Replayer<Connection> replayer = Replayer.builder(store, slowAck).clock(clock)
          .concurrency(1).listener(metrics).build()) {
        assertThat(replayer.runPass().acked()).isEqualTo(3);
      }
      assertThat(registry.get("outbox.commands").tag("status", "acked").gauge().value())
          .isEqualTo(3);
      assertThat(registry.get("outbox.commands").tag("status", "queued").gauge().value())
          .isZero();
      assertThat(registry.get("outbox.oldest.open.age").gauge().value()).isZero();
      assertThat(registry.get("outbox.transitions").tag("to", "acked").counter().count())
          .isEqualTo(3);
      var attempts = registry.get("outbox.attempt").tag("outcome", "acked").timer();
      assertThat(attempts.count()).isEqualTo(3);
      assertThat(attempts.max(java.util.concurrent.TimeUnit.MILLISECONDS))
          .as("measured by the replayer's clock").isGreaterThanOrEqualTo(250);
      assertThat(registry.get("outbox.pass").tag("idle", "false").timer().count()).isEqualTo(1);
    }
  }

  /**
   * Micrometer holds a gauge's object weakly unless told otherwise: a binder the application
   * binds and drops (as the README shows) would read NaN after the next collection.
   */
  @Test
  void gaugesKeepReportingWhenTheApplicationKeepsNoReference() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("dropped"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox.builder(store).build().accept(OutboxCommand.of("note.put", "note-1", Map.of()));
      Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db),
          (Connection tx, InboxMessage m) -> m.bytes(), (scope, id, result) -> { }).build();
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      WeakReference<OutboxMetrics> outboxMetrics = bindAndDrop(store, registry);
      WeakReference<Inbox<Connection>> inboxHeld = new WeakReference<>(inbox);
      InboxMetrics.of(inbox).bindTo(registry);
      inbox = null;
      collectUntilCleared();

      assertThat(outboxMetrics.get()).as("the registry keeps the binder").isNotNull();
      assertThat(inboxHeld.get()).as("the registry keeps the inbox").isNotNull();
      assertThat(registry.get("outbox.commands").tag("status", "queued").gauge().value())
          .isEqualTo(1);
      assertThat(registry.get("outbox.oldest.open.age").gauge().value()).isNotNaN();
      assertThat(registry.get("inbox.mismatches").gauge().value()).isZero();
      assertThat(registry.get("inbox.integrity.failures").gauge().value()).isZero();
    }
  }

  private static WeakReference<OutboxMetrics> bindAndDrop(H2OutboxStore store,
      SimpleMeterRegistry registry) {
    OutboxMetrics metrics = OutboxMetrics.of(store);
    metrics.bindTo(registry);
    return new WeakReference<>(metrics);
  }

  /** Runs full collections until an object reachable only weakly is gone (at most 50). */
  private static void collectUntilCleared() {
    WeakReference<Object> sentinel = new WeakReference<>(new Object());
    for (int i = 0; i < 50 && sentinel.get() != null; i++) {
      System.gc();
    }
    assertThat(sentinel.get()).as("a collection ran").isNull();
  }

  @Test
  void inboxReceivesAreCountedByOutcome() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("inbox"))) {
      Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db),
          (Connection tx, InboxMessage m) -> m.bytes(), (scope, id, result) -> { }).build();
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      InboxMetrics metrics = InboxMetrics.of(inbox);
      metrics.bindTo(registry);
      metrics.counted(inbox.receive("s", "m1", new byte[] {1}));
      metrics.counted(inbox.receive("s", "m1", new byte[] {1}));
      metrics.counted(inbox.receive("s", "m1", new byte[] {2}));
      assertThat(registry.get("inbox.receives").tag("outcome", "consumed").counter().count())
          .isEqualTo(1);
      assertThat(registry.get("inbox.receives").tag("outcome", "duplicate").counter().count())
          .isEqualTo(1);
      assertThat(registry.get("inbox.receives").tag("outcome", "duplicate_mismatch").counter()
          .count()).isEqualTo(1);
      assertThat(registry.get("inbox.mismatches").gauge().value()).isEqualTo(1);
      assertThat(registry.get("inbox.integrity.failures").gauge().value()).isZero();
    }
  }
}
