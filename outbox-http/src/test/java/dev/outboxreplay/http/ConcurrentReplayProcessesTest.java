package dev.outboxreplay.http;

import dev.outboxreplay.jdbc.JdbcDatabase;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.server.FaultPlan;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two app instances, each a real child JVM, replay one outbox file at the same time (H2
 * {@code AUTO_SERVER}; this test's JVM holds the file, as the app's main process would) against
 * the reference server, which loses 15% of its answers after committing. Midway one instance is
 * killed with SIGKILL; the survivor takes over its leases. Every command is acked, applied once
 * locally, has exactly one effect at the server, and each entity's effects arrive in accept
 * order. Set {@code -Dreplay.seed=N} to replay a run; the seed is printed.
 */
class ConcurrentReplayProcessesTest {
  private static final int ENTITIES = 10;
  private static final int PER_ENTITY = 40;
  private static final int COMMANDS = ENTITIES * PER_ENTITY;
  private static final Duration CHILD_QUIET = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void twoReplayingProcessesOnOneFileWithOneKilledApplyEachCommandOnceInOrder() throws Exception {
    long seed = Seeds.seed("replay.seed", "ConcurrentReplayProcessesTest");
    SplittableRandom random = new SplittableRandom(seed);
    Path clientFile = dir.resolve("client");
    try (H2Database clientDb = H2Database.open(clientFile);
        H2Database serverDb = H2Database.open(dir.resolve("server"))) {
      H2OutboxStore store = H2OutboxStore.create(clientDb);
      try (Connection c = clientDb.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE applied_answer (command_id UUID PRIMARY KEY, owner VARCHAR(50))");
      }
      Outbox<Connection> outbox = Outbox.builder(store).build();
      List<OutboxCommand> commands = new ArrayList<>();
      for (int seq = 0; seq < PER_ENTITY; seq++) {
        for (int e = 0; e < ENTITIES; e++) {
          commands.add(OutboxCommand.of(NotesApplication.OPERATION, "entity-" + e,
              Map.of("entity", "entity-" + e, "seq", seq, "body", "note " + seq)));
        }
      }
      List<OutboxRecord> accepted = outbox.acceptAll(commands);

      NotesApplication notes = new NotesApplication(serverDb);
      AtomicInteger requests = new AtomicInteger();
      CountDownLatch midway = new CountDownLatch(1);
      IdempotentServer server = IdempotentServer.builder().database(serverDb)
          .handler(NotesApplication.OPERATION, notes.handler())
          .faults(request -> {
            if (requests.incrementAndGet() == COMMANDS * 3 / 8) {
              midway.countDown();
            }
            synchronized (random) {
              return random.nextInt(100) < 15 ? FaultPlan.Fault.dropResponseAfterCommit()
                  : FaultPlan.Fault.NONE;
            }
          })
          .start();
      int ackedByKilled;
      int ackedBySurvivor;
      try (ChildJvm doomed = child("doomed", clientFile, server);
          ChildJvm survivor = child("survivor", clientFile, server)) {
        assertThat(doomed.nextLine(CHILD_QUIET)).isEqualTo("ready");
        assertThat(survivor.nextLine(CHILD_QUIET)).isEqualTo("ready");
        doomed.send("go");
        survivor.send("go");
        // Killed while both are sending: the server has seen 3/8 of the commands.
        assertThat(midway.await(CHILD_QUIET.toSeconds(), TimeUnit.SECONDS)).isTrue();
        doomed.kill();
        ackedByKilled = ackedSoFar(doomed);
        ackedBySurvivor = finalCount(survivor);
      } finally {
        server.close();
      }
      long unknown = count(clientDb, "SELECT COUNT(*) FROM outbox_audit "
          + "WHERE to_status = 'unknown'");
      long takeovers = count(clientDb, "SELECT COUNT(*) FROM outbox_audit WHERE "
          + "reason IN ('lease_expired_while_sending', 'lease_expired_while_claimed')");
      System.out.printf("seed %d: killed instance printed %d acked, survivor %d; %d requests, "
          + "%d answers lost, %d rows of the killed instance taken over%n", seed, ackedByKilled,
          ackedBySurvivor, requests.get(), unknown, takeovers);
      assertThat(unknown).as("answers were lost after the server committed").isPositive();

      assertThat(store.countByStatus().get(Status.ACKED)).as("seed %d", seed)
          .isEqualTo(COMMANDS);
      Map<String, Long> appliedBy = appliedByOwner(clientDb);
      assertThat(appliedBy.values().stream().mapToLong(Long::longValue).sum())
          .as("answers applied locally, once each (primary key), seed %d", seed)
          .isEqualTo(COMMANDS);
      assertThat(appliedBy).as("both instances applied answers").containsKeys("doomed",
          "survivor");
      assertThat(notes.totalEffects()).as("seed %d", seed).isEqualTo(COMMANDS);
      assertThat(notes.keysAppliedMoreThanOnce()).isZero();
      List<Long> inOrder = new ArrayList<>();
      for (long seq = 0; seq < PER_ENTITY; seq++) {
        inOrder.add(seq);
      }
      for (int e = 0; e < ENTITIES; e++) {
        assertThat(notes.arrivalOrder("entity-" + e)).as("entity-%d, seed %d", e, seed)
            .isEqualTo(inOrder);
      }
      for (OutboxRecord command : accepted) {
        assertThat(notes.effectCount("default", command.idempotencyKey().value()))
            .as("effects of %s, seed %d", command.idempotencyKey().value(), seed).isEqualTo(1);
      }
    }
  }

  private ChildJvm child(String owner, Path clientFile, IdempotentServer server)
      throws Exception {
    return ChildJvm.start(ReplayProcessChild.class, dir.resolve(owner + ".err"),
        clientFile.toString(), server.baseUrl(), owner, "1500");
  }

  /** The latest running total among the lines printed so far. */
  private static int ackedSoFar(ChildJvm child) {
    int acked = 0;
    for (String line : child.linesSoFar()) {
      if (line.startsWith("acked ")) {
        acked = Integer.parseInt(line.substring(6));
      }
    }
    return acked;
  }

  private static int finalCount(ChildJvm child) throws InterruptedException {
    while (true) {
      String line = child.nextLine(CHILD_QUIET);
      if (line.startsWith("done ")) {
        return Integer.parseInt(line.substring(5));
      }
    }
  }

  /** The single number {@code sql} selects. */
  static long count(JdbcDatabase db, String sql) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static Map<String, Long> appliedByOwner(H2Database db) throws Exception {
    Map<String, Long> byOwner = new HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT owner, COUNT(*) FROM applied_answer GROUP BY owner")) {
      while (rs.next()) {
        byOwner.put(rs.getString(1), rs.getLong(2));
      }
    }
    return byOwner;
  }
}
