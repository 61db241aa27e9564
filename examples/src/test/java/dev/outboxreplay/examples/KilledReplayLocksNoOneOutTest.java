package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.examples.cli.OutboxTool;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A {@code replay} SIGKILLed at any moment locks no command of the tool out (invariant 16): 50
 * times a child JVM runs {@code outbox replay} and is killed before its first request, while it
 * waits for the answer to its first request, or after some answers came; right after each kill
 * {@code status} and {@code replay} run and neither refuses the file. In the field every such
 * kill left {@code app.lock.db} behind and every later command exited 2, for good. At the end
 * every command is acked and each was applied by the receiver once. Then a new file's creating
 * {@code enqueue} is killed at a random moment of its first two seconds, 15 times, and {@code
 * status} and {@code replay} run on what it left. Each runs on both engines.
 */
@Execution(ExecutionMode.CONCURRENT) // its methods beside each other: each has its own files
class KilledReplayLocksNoOneOutTest {
  private static final int KILLS = Integer.getInteger("kills", 50);
  private static final int CREATOR_KILLS = Integer.getInteger("kills.creator", 15);

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void statusAndReplayRightAfterEachKillNeverRefuseTheFile(String engine) throws Exception {
    long seed = Seeds.seed("kills.seed", "killed-replay " + engine);
    SplittableRandom random = new SplittableRandom(seed);
    String db = dir.resolve("app").toString();
    AtomicReference<CountDownLatch> arrived = new AtomicReference<>(new CountDownLatch(1));
    AtomicReference<CountDownLatch> held = new AtomicReference<>(new CountDownLatch(0));
    AtomicInteger answered = new AtomicInteger();
    try (H2Database serverDb = H2Database.open(dir.resolve("server"))) {
      NotesApplication notes = new NotesApplication(serverDb);
      try (IdempotentServer server = IdempotentServer.builder().database(serverDb)
          .handler(NotesApplication.OPERATION, notes.handler())
          .faults(request -> new FaultPlan.Fault(0, null, () -> {
            arrived.get().countDown();
            awaitQuietly(held.get());
          }, answered::incrementAndGet, false))
          .start()) {
        int accepted = 0;
        for (int kill = 0; kill < KILLS; kill++) {
          for (int i = 0; i < 3; i++, accepted++) {
            ToolRun enqueued = ToolRun.of("enqueue", "--db", db, "--engine", engine,
                "--operation", "note.put",
                "--entity", "n" + (accepted % 5), "--payload",
                "{\"entity\":\"n" + (accepted % 5) + "\",\"seq\":" + accepted + "}");
            assertThat(enqueued.exit()).as(enqueued.err()).isZero();
          }
          String moment = switch (kill % 3) {
            case 0 -> "before its first request";
            case 1 -> "while it waits for an answer";
            default -> "after answers came";
          };
          arrived.set(new CountDownLatch(1));
          held.set(new CountDownLatch(kill % 3 == 1 ? 1 : 0));
          int answeredBefore = answered.get();
          try (ChildJvm replay = ChildJvm.start(OutboxTool.class,
              dir.resolve("replay-" + kill + ".err"), "replay", "--db", db, "--url",
              server.baseUrl(), "--until-drained", "--timeout", "60s", "--lease", "4s")) {
            switch (kill % 3) {
              case 0 -> TimeUnit.MILLISECONDS.sleep(random.nextInt(400));
              case 1 -> assertThat(arrived.get().await(60, TimeUnit.SECONDS))
                  .as("kill %d: a request arrived (seed %d)", kill, seed).isTrue();
              default -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (answered.get() == answeredBefore && System.nanoTime() < deadline) {
                  TimeUnit.MILLISECONDS.sleep(5);
                }
                TimeUnit.MILLISECONDS.sleep(random.nextInt(100));
              }
            }
            replay.kill();
          } finally {
            held.get().countDown();
          }
          ToolRun status = ToolRun.of("status", "--db", db, "--json");
          assertThat(status.exit()).as("kill %d %s, status: %s (seed %d)", kill, moment,
              status.err(), seed).isZero();
          ToolRun again = ToolRun.of("replay", "--db", db, "--url", server.baseUrl(),
              "--timeout", "10s", "--lease", "4s");
          assertThat(again.exit()).as("kill %d %s, replay: %s (seed %d)", kill, moment,
              again.err(), seed).isIn(0, 3);
          assertThat(again.err()).doesNotContain("locked");
        }
        ToolRun drained = ToolRun.of("replay", "--db", db, "--url", server.baseUrl(),
            "--until-drained", "--timeout", "120s", "--lease", "4s");
        assertThat(drained.exit()).as(drained.err()).isZero();
        assertThat(drained.lastJson().path("acked").asLong()).isEqualTo(accepted);
        assertThat(notes.totalEffects()).as("seed %d", seed).isEqualTo(accepted);
        assertThat(notes.keysAppliedMoreThanOnce()).isZero();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void aFileWhoseCreatorWasKilledInItsFirstTwoSecondsIsReadAndReplayed(String engine)
      throws Exception {
    long seed = Seeds.seed("kills.seed", "killed-creator " + engine);
    SplittableRandom random = new SplittableRandom(seed);
    try (H2Database serverDb = H2Database.open(dir.resolve("server"));
        IdempotentServer server = IdempotentServer.builder().database(serverDb)
            .handler(NotesApplication.OPERATION, new NotesApplication(serverDb).handler())
            .start()) {
      for (int kill = 0; kill < CREATOR_KILLS; kill++) {
        String db = dir.resolve("new-" + kill).resolve("app").toString();
        int after = random.nextInt(2000);
        try (ChildJvm creator = ChildJvm.start(OutboxTool.class,
            dir.resolve("creator-" + kill + ".err"), "enqueue", "--db", db, "--engine", engine,
            "--operation", "note.put", "--entity", "n", "--payload",
            "{\"entity\":\"n\",\"seq\":" + kill + "}")) {
          TimeUnit.MILLISECONDS.sleep(after);
          creator.kill();
        }
        if (!java.nio.file.Files.exists(dir.resolve("new-" + kill))) {
          continue; // killed before it made anything: nothing to open
        }
        ToolRun status = ToolRun.of("status", "--db", db, "--json");
        boolean nothingYet = status.err().contains("no outbox database at");
        assertThat(status.exit() == 0 || nothingYet)
            .as("kill %d after %d ms, status: %s (seed %d)", kill, after, status.err(), seed)
            .isTrue();
        if (nothingYet) {
          continue;
        }
        ToolRun replay = ToolRun.of("replay", "--db", db, "--url", server.baseUrl(),
            "--until-drained", "--timeout", "30s");
        assertThat(replay.exit()).as("kill %d after %d ms, replay: %s (seed %d)", kill, after,
            replay.err(), seed).isZero();
      }
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
