package dev.outboxreplay.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.testkit.Seeds;
import dev.outboxreplay.testkit.jdbc.SimulatedInboxFile;
import dev.outboxreplay.testkit.jdbc.SimulatedOutboxFile;
import dev.outboxreplay.testkit.sim.InboxSimulation;
import dev.outboxreplay.testkit.sim.OutboxSimulation;
import dev.outboxreplay.testkit.sim.Schedules;
import dev.outboxreplay.testkit.sim.SimulationStats;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulated schedules of the H2 module's {@code OutboxSimulationTest} on real SQLite files:
 * lost, held, reordered, refused and duplicated requests, lost answers, one or two replayers,
 * session changes, offline spells and crashes at every failure point, the file closed and opened
 * again after each crash. Each schedule's seed is the run's seed plus its number; a failure names
 * it: {@code -Dsim.seed=S -Dsim.schedules=1} runs that schedule alone.
 */
class SqliteSimulationTest {
  static final int STEPS = 40;

  @TempDir Path dir;

  @Test
  void everyScheduleKeepsTheInvariants() {
    long seed = Seeds.seed("sim.seed", "SqliteSimulationTest");
    int schedules = Integer.getInteger("sim.schedules", 300);
    SimulationStats total;
    long started = System.nanoTime();
    try (SimulatedOutboxFile<SqliteDatabase> database = new SimulatedOutboxFile<>(
        () -> SqliteDatabase.open(dir.resolve("simulated")),
        "CREATE TABLE IF NOT EXISTS sim_applied (n INTEGER PRIMARY KEY AUTOINCREMENT, "
            + "command_id TEXT NOT NULL)", SqliteOutboxStore::create)) {
      total = Schedules.run(seed, schedules, "sim.seed",
          choices -> OutboxSimulation.run(choices, database, STEPS));
    }
    System.out.printf("SqliteSimulationTest: %d schedules in %d ms: %s%n", schedules,
        (System.nanoTime() - started) / 1_000_000, total);
    if (schedules >= 100) {
      assertThat(total.crashesAt().keySet()).as("crashes per failure point").contains(
          FailurePoint.BEFORE_OUTBOX_WRITE, FailurePoint.AFTER_OUTBOX_WRITE,
          FailurePoint.AFTER_CLAIM, FailurePoint.BEFORE_NETWORK_SEND,
          FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE,
          FailurePoint.AFTER_RESPONSE_BEFORE_ACK);
      assertThat(total.withTwoReplayers()).isBetween(1, schedules - 1);
      assertThat(total.lostAnswers()).isPositive();
      assertThat(total.reopens()).isPositive();
      assertThat(total.refusedApplies()).isPositive();
    }
  }

  @Test
  void everyInboxScheduleConsumesOnceAndProjectsWhatWasConsumed() {
    long seed = Seeds.seed("sim.inbox.seed", "SqliteSimulationTest inbox");
    int schedules = Integer.getInteger("sim.schedules", 100);
    SimulationStats total;
    try (SimulatedInboxFile<SqliteDatabase> database = new SimulatedInboxFile<>(
        () -> SqliteDatabase.open(dir.resolve("inbox")),
        "CREATE TABLE IF NOT EXISTS sim_consumed (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            + "message_id TEXT NOT NULL, bytes BLOB NOT NULL)", SqliteInboxStore::create)) {
      total = Schedules.run(seed, schedules, "sim.inbox.seed",
          choices -> InboxSimulation.run(choices, database, 30));
    }
    System.out.printf("SqliteSimulationTest inbox: %d schedules: %s%n", schedules, total);
    if (schedules >= 50) {
      assertThat(total.crashesAt().keySet()).containsExactlyInAnyOrder(
          FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION,
          FailurePoint.AFTER_PROJECTION_BEFORE_MARK);
      assertThat(total.reopens()).isPositive();
    }
  }
}
