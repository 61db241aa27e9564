package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.testkit.Seeds;
import dev.outboxreplay.testkit.sim.InboxSimulation;
import dev.outboxreplay.testkit.sim.OutboxSimulation;
import dev.outboxreplay.testkit.sim.Schedules;
import dev.outboxreplay.testkit.sim.SimulationStats;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hundreds of simulated schedules of the real engine on real H2 files: lost, held, reordered,
 * refused and duplicated requests, lost answers, one or two replayers, a receiver with and without
 * reconciliation, session changes, offline spells and crashes at every outbox failure point
 * (see {@link OutboxSimulation}). Each schedule's seed is the run's seed plus its number; a
 * failure names it: {@code -Dsim.seed=S -Dsim.schedules=1} runs that schedule alone.
 */
class OutboxSimulationTest {
  static final int STEPS = 40;

  @TempDir Path dir;

  @Test
  void everyScheduleKeepsTheInvariants() {
    long seed = Seeds.seed("sim.seed", "OutboxSimulationTest");
    int schedules = Integer.getInteger("sim.schedules", 300);
    SimulationStats total;
    long started = System.nanoTime();
    try (var database = H2SimulatedFiles.outbox(dir.resolve("simulated"))) {
      total = Schedules.run(seed, schedules, "sim.seed",
          choices -> OutboxSimulation.run(choices, database, STEPS));
    }
    System.out.printf("OutboxSimulationTest: %d schedules in %d ms: %s%n", schedules,
        (System.nanoTime() - started) / 1_000_000, total);
    if (schedules >= 100) {
      // what the run must have exercised, whatever the seed
      assertThat(total.crashesAt().keySet()).as("crashes per failure point").contains(
          FailurePoint.BEFORE_OUTBOX_WRITE, FailurePoint.AFTER_OUTBOX_WRITE,
          FailurePoint.AFTER_CLAIM, FailurePoint.BEFORE_NETWORK_SEND,
          FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE,
          FailurePoint.AFTER_RESPONSE_BEFORE_ACK);
      assertThat(total.withReconciliation()).isBetween(1, schedules - 1);
      assertThat(total.withTwoReplayers()).isBetween(1, schedules - 1);
      assertThat(total.interleaved()).isPositive();
      assertThat(total.reordered()).isPositive();
      assertThat(total.duplicated()).isPositive();
      assertThat(total.lostAnswers()).isPositive();
      assertThat(total.reopens()).isPositive();
      assertThat(total.refusedApplies()).isPositive();
    }
  }

  /**
   * The inbox under the same kind of schedules: deliveries duplicated and now and then with
   * other bytes under a known id, projections that fail, crashes after the consume commit and
   * after the projection, the file reopened now and then ({@link InboxSimulation}).
   */
  @Test
  void everyInboxScheduleConsumesOnceAndProjectsWhatWasConsumed() {
    long seed = Seeds.seed("sim.inbox.seed", "OutboxSimulationTest inbox");
    int schedules = Integer.getInteger("sim.schedules", 100);
    SimulationStats total;
    try (var database = H2SimulatedFiles.inbox(dir.resolve("inbox"))) {
      total = Schedules.run(seed, schedules, "sim.inbox.seed",
          choices -> InboxSimulation.run(choices, database, 30));
    }
    System.out.printf("OutboxSimulationTest inbox: %d schedules: %s%n", schedules, total);
    if (schedules >= 50) {
      assertThat(total.crashesAt().keySet()).containsExactlyInAnyOrder(
          FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION,
          FailurePoint.AFTER_PROJECTION_BEFORE_MARK);
      assertThat(total.reopens()).isPositive();
      assertThat(total.duplicated()).isPositive();
    }
  }
}
