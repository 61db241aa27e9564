package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.CommandId;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Real kills at exact failure points: a child JVM ({@link HaltAtPointChild}) accepts commands and
 * replays them to the reference server, which runs in this JVM, and halts itself with {@link
 * Runtime#halt} the chosen time it reaches the chosen outbox {@link FailurePoint}; the next child
 * opens the same file, accepts more and replays, and so on. Two lanes (client files) run side by
 * side; together they halt {@code kill.perPoint} times per point (9 by default: 54 kills). A last
 * child per lane drains. Then every accept that returned is in the file and
 * acked, every command took effect once at the server and had its answer applied once, in accept
 * order per entity. The two lanes are the two engines: lane 0 an H2 file, lane 1 a SQLite file.
 * Seeded: {@code -Dkill.seed=N}.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("FailurePointKillTest") // its own methods one after another
class FailurePointKillTest {
  private static final List<FailurePoint> POINTS = List.of(FailurePoint.BEFORE_OUTBOX_WRITE,
      FailurePoint.AFTER_OUTBOX_WRITE, FailurePoint.AFTER_CLAIM,
      FailurePoint.BEFORE_NETWORK_SEND, FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE,
      FailurePoint.AFTER_RESPONSE_BEFORE_ACK);
  private static final int ACCEPTS_PER_CHILD = 3;
  private static final Duration CHILD_LIMIT = Duration.ofSeconds(90);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void haltingAtEveryOutboxFailurePointLosesNothingAndAppliesOnce() throws Exception {
    long seed = Seeds.seed("kill.seed", "FailurePointKillTest");
    int perPoint = Integer.getInteger("kill.perPoint", 9);
    try (H2Database serverDb = H2Database.open(dir.resolve("server"))) {
      NotesApplication notes = new NotesApplication(serverDb);
      try (IdempotentServer server = IdempotentServer.builder().database(serverDb)
          .handler(NotesApplication.OPERATION, notes.handler()).start()) {
        // two lanes, each its own client file and entities, run side by side: half the time
        List<Lane> lanes = List.of(new Lane(0, seed, (perPoint + 1) / 2),
            new Lane(1, seed + 1, perPoint / 2));
        List<Thread> threads = new ArrayList<>();
        for (Lane lane : lanes) {
          lane.prepare(server.baseUrl());
          Thread t = new Thread(lane, "kill-lane-" + lane.number);
          threads.add(t);
          t.start();
        }
        for (Thread t : threads) {
          t.join(Duration.ofMinutes(10).toMillis());
          assertThat(t.isAlive()).as("seed %d: lane still running after 10 min", seed).isFalse();
        }
        Map<FailurePoint, Integer> halted = new EnumMap<>(FailurePoint.class);
        int children = 0;
        int acknowledged = 0;
        for (Lane lane : lanes) {
          if (lane.failure != null) {
            throw new AssertionError("seed " + seed + ", lane " + lane.number, lane.failure);
          }
          lane.halted.forEach((p, n) -> halted.merge(p, n, Integer::sum));
          children += lane.children;
          acknowledged += lane.acknowledged.size();
          lane.verify(notes);
        }
        System.out.printf("FailurePointKillTest seed %d: %d children, %d halts %s, %d accepts "
            + "acknowledged%n", seed, children, halted.values().stream()
            .mapToInt(Integer::intValue).sum(), halted, acknowledged);
        assertThat(halted).as("seed %d", seed).containsOnlyKeys(POINTS);
        assertThat(halted.values()).allMatch(n -> n == perPoint);
        assertThat(notes.keysAppliedMoreThanOnce()).as("seed %d", seed).isZero();
      }
    }
  }

  /** One client file: children halted at each point in turn, then one that drains. */
  private final class Lane implements Runnable {
    final int number;
    final long seed;
    final int perPoint;
    final SplittableRandom random;
    final Path client;
    final String entities;
    final Engine engine;
    final Map<FailurePoint, Integer> halted = new EnumMap<>(FailurePoint.class);
    final Map<CommandId, String> acknowledged = new java.util.concurrent.ConcurrentHashMap<>();
    int children;
    String url;
    volatile Throwable failure;

    Lane(int number, long seed, int perPoint) {
      this.number = number;
      this.seed = seed;
      this.perPoint = perPoint;
      this.random = new SplittableRandom(seed);
      this.client = dir.resolve("client-" + number);
      this.entities = "lane-" + number + "-entity-";
      this.engine = number == 0 ? Engine.H2 : Engine.SQLITE;
    }

    void prepare(String url) {
      this.url = url;
    }

    @Override
    public void run() {
      try {
        int next = 0;
        for (FailurePoint point : POINTS) {
          while (halted.getOrDefault(point, 0) < perPoint) {
            assertThat(children).as("seed %d: children started", seed)
                .isLessThan(40 * perPoint);
            int exit = runChild(url, client, point.label(), 1 + random.nextInt(3), next,
                entities, acknowledged, number + "-" + children++, engine);
            next += ACCEPTS_PER_CHILD;
            if (exit == HaltAtPointChild.HALTED) {
              halted.merge(point, 1, Integer::sum);
            }
          }
        }
        int last = runChild(url, client, "none", 0, next, entities, acknowledged,
            number + "-" + children++, engine);
        assertThat(last).as("seed %d: the last child drains and exits", seed).isZero();
      } catch (Throwable t) {
        failure = t;
      }
    }

    void verify(NotesApplication notes) throws Exception {
      JdbcDatabase clientDb = engine.open(client);
      try {
        JdbcOutboxStore store = JdbcOutboxStore.create(clientDb);
        for (Map.Entry<CommandId, String> a : acknowledged.entrySet()) {
          assertThat(store.find(a.getKey()).map(OutboxRecord::status))
              .as("seed %d: acknowledged accept %s", seed, a.getValue())
              .contains(Status.ACKED);
        }
        Map<Status, Long> counts = store.countByStatus();
        long rows = counts.values().stream().mapToLong(Long::longValue).sum();
        assertThat(counts.get(Status.ACKED)).as("seed %d: %s", seed, counts).isEqualTo(rows);
        Map<String, List<Long>> acceptOrder = new TreeMap<>();
        long applied;
        try (Connection c = clientDb.dataSource().getConnection();
            Statement s = c.createStatement()) {
          try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM applied_answer")) {
            rs.next();
            applied = rs.getLong(1);
          }
          try (ResultSet rs = s.executeQuery(
              "SELECT entity_key, payload FROM outbox_command ORDER BY seq")) {
            while (rs.next()) {
              acceptOrder.computeIfAbsent(rs.getString(1), e -> new ArrayList<>())
                  .add(JSON.readTree(rs.getBytes(2)).path("seq").asLong());
            }
          }
        }
        assertThat(applied).as("seed %d: answers applied", seed).isEqualTo(rows);
        long effects = 0;
        for (Map.Entry<String, List<Long>> e : acceptOrder.entrySet()) {
          List<Long> arrived = notes.arrivalOrder(e.getKey());
          assertThat(arrived).as("seed %d: %s, each once, in accept order", seed, e.getKey())
              .isEqualTo(e.getValue());
          effects += arrived.size();
        }
        assertThat(effects).as("seed %d: effects at the server", seed).isEqualTo(rows);
      } finally {
        clientDb.close();
      }
    }
  }

  /** Runs one child to its end; returns its exit status. */
  private int runChild(String url, Path client, String point, int call, int first,
      String entities, Map<CommandId, String> acknowledged, String number, Engine engine)
      throws Exception {
    try (ChildJvm child = ChildJvm.start(HaltAtPointChild.class,
        dir.resolve("child-" + number + ".err"), client.toString(), url, point,
        Integer.toString(call), Integer.toString(ACCEPTS_PER_CHILD), Integer.toString(first),
        entities, engine.name())) {
      int exit = child.waitForExit(CHILD_LIMIT);
      List<String> lines = child.remainingLines(Duration.ofSeconds(5));
      for (String line : lines) {
        String[] f = line.split(" ");
        if (f[0].equals("ACK")) {
          acknowledged.put(CommandId.parse(f[1]), "child " + number + " (" + point + "), "
              + f[2] + " seq " + f[3]);
        }
      }
      if (exit != HaltAtPointChild.HALTED) {
        assertThat(exit).as("child %d (%s): %s", number, point, child.stderrText()).isZero();
        assertThat(lines).as("child %d (%s) drained: %s", number, point, child.stderrText())
            .contains("DRAINED true");
      }
      return exit;
    }
  }
}
