package dev.outboxreplay.http;

import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.ParameterizedTest;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.jdbc.JdbcDatabase;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.Seeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Several processes on one outbox file, under random SIGKILLs: two app instances accept
 * commands and a third replays them to the reference server (which loses 10% of its answers
 * after committing), each a child JVM; this test's JVM does not open the file, so one of the
 * children serves it to the others and a kill of that one is a handover. 10 rounds: kill one of
 * the three, or an accepting one and the replaying one, at random; check that the others go on
 * (no accept fails or takes longer than the bound; a surviving replayer acks a command accepted
 * after the kill); then restart the killed ones. At the end every accepted command is acked,
 * applied once locally, has exactly one effect at the server, and each entity's effects arrived
 * in accept order. Set {@code -Dsoak.seed=N} to replay; the seed is printed.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("OutboxSoakTest") // its own methods one after another
class OutboxSoakTest {
  private static final int ROUNDS = 10;
  private static final Duration QUIET = Duration.ofSeconds(60);
  /**
   * Handover bound. 2 s with one process left; two processes racing to take the file over can
   * make the loser wait for H2's lock-file granularity once more (measured up to 5.4 s), so this
   * soak, where two survivors are common, asserts 8 s.
   */
  private static final long BOUND_MILLIS = 8_000;

  @TempDir Path dir;

  /** One child and everything it printed. */
  private static final class Instance {
    final String role;
    final String name;
    final ChildJvm child;
    final List<String> lines = new ArrayList<>();

    Instance(String role, String name, ChildJvm child) {
      this.role = role;
      this.name = name;
      this.child = child;
    }

    void collect() {
      lines.addAll(child.linesSoFar());
    }

    long count(String prefix) {
      return lines.stream().filter(l -> l.startsWith(prefix)).count();
    }
  }

  @ParameterizedTest
  @EnumSource(Engine.class)
  void twoAcceptingAndOneReplayingProcessKilledAtRandomLoseNothingAndApplyOnce(Engine engine)
      throws Exception {
    long seed = Seeds.seed("soak.seed", "OutboxSoakTest " + engine);
    SplittableRandom random = new SplittableRandom(seed);
    Path clientFile = dir.resolve("client-" + engine);
    JdbcDatabase created = engine.openShared(clientFile);
    try (Connection c = created.dataSource().getConnection(); Statement s = c.createStatement()) {
      JdbcOutboxStore.create(created);
      s.execute("CREATE TABLE applied_answer (command_id VARCHAR(36) PRIMARY KEY, "
          + "owner VARCHAR(50))");
    } finally {
      created.close(); // the children share the file among themselves
    }

    try (H2Database serverDb = H2Database.open(dir.resolve("server"))) {
      NotesApplication notes = new NotesApplication(serverDb);
      SplittableRandom faults = new SplittableRandom(seed + 1);
      try (IdempotentServer server = IdempotentServer.builder().database(serverDb)
          .handler(NotesApplication.OPERATION, notes.handler())
          .faults(request -> {
            synchronized (faults) {
              return faults.nextInt(100) < 10 ? FaultPlan.Fault.dropResponseAfterCommit()
                  : FaultPlan.Fault.NONE;
            }
          }).start()) {
        Map<String, Instance> running = new LinkedHashMap<>();
        List<Instance> all = new ArrayList<>();
        AtomicInteger incarnation = new AtomicInteger();
        List<String> killLog = new ArrayList<>();
        Map<CommandId, String> acknowledgedBy = new HashMap<>();
        long longestAccept = 0;
        List<Long> replayLags = new ArrayList<>();
        try {
          for (int round = 0; round < ROUNDS; round++) {
            for (String role : List.of("accept-a", "accept-b", "replay")) {
              if (!running.containsKey(role)) {
                Instance started = start(role, incarnation.incrementAndGet(), clientFile, server,
                    engine);
                running.put(role, started);
                all.add(started);
              }
            }
            // let every instance work a little
            long acksBefore = totalAcks(running);
            int warmup = random.nextInt(10, 60);
            Awaitility.await().atMost(QUIET).pollInterval(Duration.ofMillis(20))
                .until(() -> totalAcks(running) >= acksBefore + warmup);
            // one of the three, or an accepting one and the replaying one; an accepting instance
            // always survives, so that there is something new for a surviving replayer to send
            List<String> victims = new ArrayList<>();
            int pick = random.nextInt(5);
            victims.add(List.of("accept-a", "accept-b", "replay", "accept-a", "accept-b")
                .get(pick));
            if (pick >= 3) {
              victims.add("replay");
            }
            List<String> victimNames = new ArrayList<>();
            for (String role : victims) {
              victimNames.add(running.get(role).name);
            }
            killLog.add("round " + round + ": " + victimNames);
            for (String role : victims) {
              Instance victim = running.remove(role);
              victim.child.kill();
              victim.lines.addAll(victim.child.remainingLines(Duration.ofSeconds(30)));
            }
            long killedAt = System.nanoTime();
            // the survivors go on: 15 more accepts by each accepting survivor, and a surviving
            // replayer acks a command accepted after the kill
            Map<String, Long> acceptsAtKill = new HashMap<>();
            for (Instance i : running.values()) {
              i.collect();
              acceptsAtKill.put(i.role, i.count("ACK "));
            }
            try {
              Awaitility.await().atMost(QUIET).pollInterval(Duration.ofMillis(20)).until(() -> {
                running.values().forEach(Instance::collect);
                return running.values().stream().filter(i -> !i.role.equals("replay"))
                    .allMatch(i -> i.count("ACK ") >= acceptsAtKill.get(i.role) + 15);
              });
            } catch (org.awaitility.core.ConditionTimeoutException e) {
              StringBuilder survivors = new StringBuilder();
              for (Instance i : running.values()) {
                List<String> tail = i.lines.subList(Math.max(0, i.lines.size() - 5),
                    i.lines.size());
                survivors.append("\n--- ").append(i.role).append(": ")
                    .append(i.count("ACK ") - acceptsAtKill.getOrDefault(i.role, 0L))
                    .append(" accepts since the kill; last lines ").append(tail)
                    .append("; stderr:\n").append(i.child.stderrText())
                    .append("\n--- ").append(i.role).append(" (pid ").append(i.child.pid())
                    .append("): threads\n").append(i.child.threadDump(Duration.ofSeconds(20)));
              }
              throw new AssertionError("seed " + seed + " round " + round + ": the accepting "
                  + "survivors did not make 15 accepts each within " + QUIET + " after the kill "
                  + "of " + victims + "; H2's lock file: " + lockFileText(clientFile) + survivors,
                  e);
            }
            Instance replayer = running.get("replay");
            if (replayer != null) {
              List<String> acceptedAfter = new ArrayList<>();
              for (Instance i : running.values()) {
                if (!i.role.equals("replay")) {
                  i.lines.stream().filter(l -> l.startsWith("ACK ")).skip(acceptsAtKill.get(i.role))
                      .map(l -> "ACKED " + l.split(" ")[1]).forEach(acceptedAfter::add);
                }
              }
              try {
                Awaitility.await().atMost(QUIET).pollInterval(Duration.ofMillis(20)).until(() -> {
                  replayer.collect();
                  return acceptedAfter.stream().anyMatch(replayer.lines::contains);
                });
              } catch (org.awaitility.core.ConditionTimeoutException e) {
                throw new AssertionError("seed " + seed + " round " + round + ": the surviving "
                    + "replayer acked none of " + acceptedAfter.size() + " commands accepted "
                    + "after the kill of " + victims + "; its stderr:\n"
                    + replayer.child.stderrText(), e);
              }
              replayLags.add((System.nanoTime() - killedAt) / 1_000_000);
            }
            long roundLongest = 0;
            for (Instance i : running.values()) {
              if (!i.role.equals("replay")) {
                roundLongest = Math.max(roundLongest, i.lines.stream()
                    .filter(l -> l.startsWith("ACK ")).skip(acceptsAtKill.get(i.role))
                    .mapToLong(l -> Long.parseLong(l.split(" ")[4])).max().orElse(0));
              }
            }
            System.out.printf("round %d: killed %s; survivors %s went on, longest accept after "
                + "the kill %d ms%n", round, victims, running.keySet(), roundLongest);
          }
          // stop accepting, drain, and let everything exit normally
          for (String role : List.of("accept-a", "accept-b")) {
            Instance i = running.get(role);
            if (i != null) {
              i.child.send("stop");
              i.lines.addAll(i.child.remainingLines(QUIET));
              assertThat(i.child.waitForExit(QUIET)).as(i.child.stderrText()).isZero();
            }
          }
          if (!running.containsKey("replay")) {
            Instance started = start("replay", incarnation.incrementAndGet(), clientFile, server,
                engine);
            running.put("replay", started);
            all.add(started);
          }
          Instance replayer = running.get("replay");
          replayer.child.send("drain");
          replayer.lines.addAll(replayer.child.remainingLines(Duration.ofSeconds(180)));
          assertThat(replayer.lines).as(replayer.child.stderrText()).contains("DRAINED true");
        } finally {
          all.forEach(i -> i.child.close());
        }

        // no accept failed or took longer than the bound, in any incarnation
        Map<String, List<Long>> seqsByEntity = new TreeMap<>();
        List<CommandId> acknowledged = new ArrayList<>();
        for (Instance i : all) {
          for (String line : i.lines) {
            assertThat(line).as("seed %d, %s: no accept fails", seed, i.role)
                .doesNotStartWith("FAILED");
            String[] f = line.split(" ");
            if (f.length == 6 && f[0].equals("ACK") && f[5].equals("END")) {
              acknowledged.add(CommandId.parse(f[1]));
              acknowledgedBy.put(CommandId.parse(f[1]), i.name);
              longestAccept = Math.max(longestAccept, Long.parseLong(f[4]));
            }
          }
        }
        System.out.printf("seed %d: %d rounds, %d accepts acknowledged, longest accept %d ms, "
            + "replayer acked a command accepted after a kill within %s ms%n", seed, ROUNDS,
            acknowledged.size(), longestAccept, replayLags);
        assertThat(longestAccept).as("seed %d: longest accept", seed).isLessThan(BOUND_MILLIS);

        JdbcDatabase clientDb = engine.openShared(clientFile);
        try {
          JdbcOutboxStore store = JdbcOutboxStore.create(clientDb);
          Map<Status, Long> counts = store.countByStatus();
          long stored = counts.values().stream().mapToLong(Long::longValue).sum();
          assertThat(counts.get(Status.ACKED)).as("seed %d: %s", seed, counts).isEqualTo(stored);
          List<CommandId> missing = acknowledged.stream()
              .filter(id -> store.find(id).isEmpty()).toList();
          if (!missing.isEmpty()) {
            // keep the evidence: the temporary folder goes when the test ends
            Path kept = Path.of("target", "soak-failures", "seed-" + seed);
            Files.createDirectories(kept);
            try (var files = Files.list(dir)) {
              for (Path f : files.filter(Files::isRegularFile).toList()) {
                Files.copy(f, kept.resolve(f.getFileName()));
              }
            }
            assertThat(missing).as("seed %d: acknowledged by %s but not in the file; kills %s; "
                + "files kept in %s", seed, missing.stream().map(acknowledgedBy::get).toList(),
                killLog, kept.toAbsolutePath()).isEmpty();
          }
          assertThat(ConcurrentReplayProcessesTest.count(clientDb,
              "SELECT COUNT(*) FROM applied_answer"))
              .as("seed %d: each answer applied once locally", seed).isEqualTo(stored);
          assertThat(notes.totalEffects()).as("seed %d: effects at the server", seed)
              .isEqualTo(stored);
          assertThat(notes.keysAppliedMoreThanOnce()).isZero();
          try (Connection c = clientDb.dataSource().getConnection();
              PreparedStatement ps = c.prepareStatement("SELECT entity_key, payload "
                  + "FROM outbox_command ORDER BY seq");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              String payload = new String(rs.getBytes(2), java.nio.charset.StandardCharsets.UTF_8);
              long seq = Long.parseLong(payload.replaceAll(".*\"seq\":(\\d+).*", "$1"));
              seqsByEntity.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(seq);
            }
          }
          for (Map.Entry<String, List<Long>> e : seqsByEntity.entrySet()) {
            assertThat(notes.arrivalOrder(e.getKey()))
                .as("seed %d: %s arrived in accept order", seed, e.getKey())
                .isEqualTo(e.getValue());
          }
        } finally {
          clientDb.close();
        }
      }
    }
  }

  /** H2's lock file of {@code file}: which process serves it, at which address, by which key. */
  private static String lockFileText(Path file) {
    try {
      return Files.readString(file.resolveSibling(file.getFileName() + ".lock.db"));
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private Instance start(String role, int incarnation, Path clientFile, IdempotentServer server,
      Engine engine) throws Exception {
    String name = role + "-" + incarnation;
    ChildJvm child = role.equals("replay")
        ? ChildJvm.start(SoakReplayChild.class, dir.resolve(name + ".err"),
            clientFile.toString(), server.baseUrl(), name, "1500", engine.name())
        : ChildJvm.start(SoakAcceptChild.class, dir.resolve(name + ".err"),
            clientFile.toString(), name, "20", engine.name());
    Instance instance = new Instance(role, name, child);
    String first = child.nextLine(QUIET);
    assertThat(first).as(child.stderrText()).isEqualTo("READY");
    return instance;
  }

  private static long totalAcks(Map<String, Instance> running) {
    long total = 0;
    for (Instance i : running.values()) {
      i.collect();
      total += i.count("ACK");
    }
    return total;
  }
}
