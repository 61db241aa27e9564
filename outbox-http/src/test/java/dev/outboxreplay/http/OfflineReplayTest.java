package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Offline is not failure: three simulated days of refused connections spend no attempts, poison
 * nothing and start no max age; on network-up everything drains. Real OkHttp against a closed
 * loopback port, then against a receiver; time is a manual clock.
 */
class OfflineReplayTest {
  @TempDir Path dir;

  @Test
  void threeDaysOfflineThenNetworkUpPoisonsNothingAndCountsOnlyRequestsThatLeft()
      throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    try (DraftReceiver receiver = new DraftReceiver(() -> false);
        H2Database db = H2Database.open(dir.resolve("client"))) {
      OkHttpTransport offline = OkHttpTransport.builder(
          HttpUrl.get("http://127.0.0.1:" + closedPort)).clock(clock).build();
      OkHttpTransport online = OkHttpTransport.builder(HttpUrl.get(receiver.baseUrl()))
          .clock(clock).build();
      AtomicBoolean networkUp = new AtomicBoolean(false);
      AtomicInteger requestsTried = new AtomicInteger();
      Transport network = new Transport() {
        @Override
        public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
          requestsTried.incrementAndGet();
          return (networkUp.get() ? online : offline).send(command, session);
        }

        @Override
        public Optional<Reconciliation> reconcile(OutboxRecord command,
            SessionRuntime.Snapshot session) throws IOException {
          return (networkUp.get() ? online : offline).reconcile(command, session);
        }
      };
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      List<OutboxRecord> accepted = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        accepted.add(outbox.accept(OutboxCommand.of("note.put", "entity-" + (i % 3),
            Map.of("entity", "entity-" + (i % 3), "seq", i / 3))));
      }
      List<Reason> pauses = new CopyOnWriteArrayList<>();
      try (Replayer<Connection> replayer = Replayer.builder(store, network).clock(clock)
          .retryPolicy(RetryPolicy.defaults(new SplittableRandom(11)))
          .listener(new OutboxListener() {
            @Override
            public void onReplayPaused(Reason reason) {
              pauses.add(reason);
            }
          }).build()) {
        int heldOffline = 0;
        for (Duration offlineFor = Duration.ZERO; offlineFor.compareTo(Duration.ofDays(3)) < 0;
            offlineFor = offlineFor.plusMinutes(10)) {
          PassSummary pass = replayer.runPass();
          heldOffline += pass.pausedReason() == Reason.OFFLINE ? 1 : 0;
          assertThat(pass.rejected()).as("after %s offline", offlineFor).isZero();
          clock.advance(Duration.ofMinutes(10));
        }
        assertThat(heldOffline).isGreaterThan(400);
        assertThat(pauses).contains(Reason.OFFLINE);
        int triedOffline = requestsTried.get();
        assertThat(triedOffline).as("one probe per pass while offline, not one per row")
            .isLessThanOrEqualTo(433 + 3);
        for (OutboxRecord r : accepted) {
          OutboxRecord now = store.find(r.commandId()).orElseThrow();
          assertThat(now.status()).isIn(Status.QUEUED, Status.RETRYABLE_FAILED);
          assertThat(now.attempt()).as("a refused connection is not an attempt").isZero();
          assertThat(now.firstSentAt()).as("nothing left: no max age started").isNull();
        }

        networkUp.set(true);
        replayer.onNetworkAvailable();
        for (int pass = 0; pass < 20 && store.countByStatus().get(Status.ACKED) < 30; pass++) {
          replayer.runPass();
          clock.advance(Duration.ofSeconds(1));
        }
      }
      for (OutboxRecord r : accepted) {
        OutboxRecord done = store.find(r.commandId()).orElseThrow();
        assertThat(done.status()).isEqualTo(Status.ACKED);
        assertThat(done.attempt()).as("only the request that reached the receiver").isEqualTo(1);
        assertThat(receiver.effects(r.idempotencyKey().value())).isEqualTo(1);
        assertThat(store.auditTrail(r.commandId())).extracting(e -> e.reason())
            .doesNotContain(Reason.POISON_MAX_AGE, Reason.POISON_MAX_ATTEMPTS);
      }
    }
  }
}
