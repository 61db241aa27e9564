package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.file.Path;
import java.time.Duration;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When the next compaction comes, and that closing never waits for it. */
class CompactionScheduleTest {
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final Duration BUDGET = Duration.ofMillis(200);

  @TempDir Path dir;

  private static FileCompaction.Run run(boolean workLeft) {
    return new FileCompaction.Run(true, 12, 100 << 20, 90 << 20, 40, 50, 20_000_000, workLeft);
  }

  @Test
  void aRunTheBudgetEndedWithWorkLeftIsFollowedAfterFourBudgets() {
    assertThat(CompactionSchedule.nextDelay(run(true), INTERVAL, BUDGET))
        .isEqualTo(Duration.ofMillis(800));
  }

  @Test
  void aRunThatFinishedItsWorkOrFailedWaitsTheInterval() {
    assertThat(CompactionSchedule.nextDelay(run(false), INTERVAL, BUDGET)).isEqualTo(INTERVAL);
    assertThat(CompactionSchedule.nextDelay(null, INTERVAL, BUDGET)).isEqualTo(INTERVAL);
    // never later than the interval, whatever the budget
    assertThat(CompactionSchedule.nextDelay(run(true), Duration.ofMillis(500), BUDGET))
        .isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void closeReturnsWithoutWaitingForTheNextRun() throws InterruptedException {
    JdbcDataSource h2 = new JdbcDataSource();
    // a name no other test's file has: the thread is found by it below, and kill tests run
    // beside this class (junit-platform.properties)
    h2.setURL("jdbc:h2:" + dir.resolve("schedule-close"));
    CompactionSchedule schedule = new CompactionSchedule(h2, dir.resolve("schedule-close.mv.db"),
        Duration.ofHours(1), BUDGET);
    // a next run waiting in the timer must not hold close for its delay (or budget + 5 s)
    assertTimeoutPreemptively(Duration.ofSeconds(3), schedule::close);
    // and the schedule's thread ends, not parked on that waiting run (a bounded join: the
    // thread may still be leaving its last frame when close returns)
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("outbox-h2-compaction:schedule-close.mv.db")) {
        t.join(Duration.ofSeconds(5).toMillis());
        assertThat(t.isAlive()).as("the compaction thread after close").isFalse();
      }
    }
  }
}
