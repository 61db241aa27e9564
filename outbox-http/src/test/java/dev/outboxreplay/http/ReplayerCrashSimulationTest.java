package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replayer's failure points, crashed on purpose: each "life" opens the client file, replays
 * until its {@link FailureInjector} throws at one of {@code after-claim}, {@code
 * before-network-send} or {@code after-response-before-ack} (from then on every point of that
 * life throws, as nothing runs in a dead process), and the next life reopens the file after the
 * dead one's leases ran out. The reference server on loopback also drops one answer in ten after
 * committing. Whatever the crashes, every command must end acked, each with exactly one effect at
 * the server and one applied answer, in accept order per entity. Seeded; set
 * {@code -Dsim.seed=N} to replay a run.
 */
class ReplayerCrashSimulationTest {
  private static final int ENTITIES = 8;
  private static final int PER_ENTITY = 25;
  private static final List<FailurePoint> POINTS = List.of(FailurePoint.AFTER_CLAIM,
      FailurePoint.BEFORE_NETWORK_SEND, FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE,
      FailurePoint.AFTER_RESPONSE_BEFORE_ACK);

  @TempDir Path dir;
  ReplayFixture f;

  @BeforeEach
  void open() throws Exception {
    f = new ReplayFixture(dir);
  }

  @AfterEach
  void close() {
    f.close();
  }

  /** What a crashed process does from the moment it dies: nothing. */
  static final class SimulatedCrash extends Error {
    SimulatedCrash(FailurePoint point) {
      super("simulated crash at " + point.label(), null, false, false);
    }
  }

  /** Crashes at the {@code atCall}-th time execution reaches {@code target}. */
  static final class Crasher implements FailureInjector {
    private final FailurePoint target;
    private final int atCall;
    private final AtomicInteger calls = new AtomicInteger();
    private volatile FailurePoint crashedAt;

    Crasher(FailurePoint target, int atCall) {
      this.target = target;
      this.atCall = atCall;
    }

    @Override
    public void at(FailurePoint point) {
      if (crashedAt != null) {
        throw new SimulatedCrash(crashedAt);
      }
      if (point == target && calls.incrementAndGet() == atCall) {
        crashedAt = point;
        throw new SimulatedCrash(point);
      }
    }
  }

  @Test
  void crashesAtEveryReplayerFailurePointLoseNothingAndApplyNothingTwice() throws Exception {
    long seed = Seeds.seed("sim.seed", "ReplayerCrashSimulationTest");
    SplittableRandom random = new SplittableRandom(seed);
    Path clientFile = dir.resolve("simulated-client");
    int commands = ENTITIES * PER_ENTITY;
    try (H2Database db = H2Database.open(clientFile)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE applied_answer (command_id UUID PRIMARY KEY, status INT)");
      }
      Outbox<Connection> outbox = Outbox.builder(store).clock(f.clock)
          .random(new SplittableRandom(seed)).build();
      List<OutboxCommand> batch = new ArrayList<>();
      for (int seq = 0; seq < PER_ENTITY; seq++) {
        for (int e = 0; e < ENTITIES; e++) {
          batch.add(OutboxCommand.of(NotesApplication.OPERATION, "entity-" + e,
              Map.of("entity", "entity-" + e, "seq", seq, "body", "note " + seq)));
        }
      }
      outbox.acceptAll(batch);
    }
    SplittableRandom serverRandom = new SplittableRandom(seed + 1);
    f.faults.set(request -> {
      synchronized (serverRandom) {
        return serverRandom.nextInt(10) == 0 ? FaultPlan.Fault.dropResponseAfterCommit()
            : FaultPlan.Fault.NONE;
      }
    });
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      try (var ps = tx.prepareStatement("INSERT INTO applied_answer VALUES (?, ?)")) {
        ps.setObject(1, command.commandId().value());
        ps.setInt(2, response.status());
        ps.executeUpdate();
      }
    };

    Map<FailurePoint, Integer> crashes = new EnumMap<>(FailurePoint.class);
    long acked = 0;
    int life = 0;
    for (; life < 150 && acked < commands; life++) {
      // The first lives crash at each point in turn, so every point is hit whatever the seed.
      FailurePoint target = life < POINTS.size() ? POINTS.get(life)
          : POINTS.get(random.nextInt(POINTS.size()));
      Crasher crasher = new Crasher(target, random.nextInt(1, 16));
      try (H2Database db = H2Database.open(clientFile)) {
        H2OutboxStore store = H2OutboxStore.create(db);
        // the transport reports the point between the request and its answer
        OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(f.server.baseUrl()))
            .callTimeout(Duration.ofSeconds(20)).clock(f.clock).failureInjector(crasher).build();
        try (Replayer<Connection> replayer = Replayer.builder(store, transport)
            .owner("life-" + life).clock(f.clock).session(f.session::get)
            .responseApplier(applier).failureInjector(crasher).concurrency(4).batchSize(16)
            .lease(Duration.ofSeconds(30)).holdInterval(Duration.ofSeconds(5))
            .retryPolicy(RetryPolicy.builder().random(new SplittableRandom(seed + life))
                .initialInterval(Duration.ofSeconds(1)).maxInterval(Duration.ofSeconds(20))
                .maxAttempts(1_000).build())
            .build()) {
          for (int pass = 0; pass < 20 && crasher.crashedAt == null; pass++) {
            try {
              replayer.runPass();
            } catch (SimulatedCrash crash) {
              break;
            }
            f.clock.advance(Duration.ofSeconds(30)); // retries and reconciliation fall due
          }
        }
        if (crasher.crashedAt != null) {
          crashes.merge(crasher.crashedAt, 1, Integer::sum);
        }
        acked = store.countByStatus().get(Status.ACKED);
      }
      f.clock.advance(Duration.ofMinutes(1)); // the dead life's leases run out
    }
    System.out.printf("ReplayerCrashSimulationTest seed %d: %d lives, crashes %s%n", seed, life,
        crashes);

    try (H2Database db = H2Database.open(clientFile)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      assertThat(store.countByStatus().get(Status.ACKED)).as("seed %d", seed)
          .isEqualTo(commands);
      for (OutboxRecord r : store.list(Status.ACKED, commands)) {
        assertThat(f.notes.effectCount("default", r.idempotencyKey().value()))
            .as("seed %d: effects of %s", seed, r.idempotencyKey()).isEqualTo(1);
      }
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM applied_answer")) {
        rs.next();
        assertThat(rs.getLong(1)).as("seed %d: answers applied", seed).isEqualTo(commands);
      }
    }
    assertThat(crashes).as("seed %d: every point crashed at least once", seed)
        .containsOnlyKeys(POINTS);
    assertThat(f.notes.totalEffects()).isEqualTo(commands);
    assertThat(f.notes.keysAppliedMoreThanOnce()).isZero();
    List<Long> inOrder = new ArrayList<>();
    for (long seq = 0; seq < PER_ENTITY; seq++) {
      inOrder.add(seq);
    }
    for (int e = 0; e < ENTITIES; e++) {
      assertThat(f.notes.arrivalOrder("entity-" + e)).as("entity-%d, seed %d", e, seed)
          .isEqualTo(inOrder);
    }
  }
}
