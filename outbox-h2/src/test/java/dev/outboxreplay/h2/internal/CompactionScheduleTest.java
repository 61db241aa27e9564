package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the next compaction comes, when a stuck one is nudged with a commit, and that closing
 * never waits for it.
 */
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
  void onlyARunThatDidNothingBelowTheTargetFillRateIsNudgedAndOnlyAFewTimesInARow() {
    // one step, nothing rewritten or moved, chunks 35% live: stuck below the target
    FileCompaction.Run stuck = new FileCompaction.Run(true, 1, 8 << 20, 8 << 20, 35, 100,
        1_000_000, false);
    assertThat(CompactionSchedule.shouldNudge(stuck, 0)).isTrue();
    assertThat(CompactionSchedule.shouldNudge(stuck,
        CompactionSchedule.MAX_NUDGES_WITHOUT_PROGRESS - 1)).isTrue();
    assertThat(CompactionSchedule.shouldNudge(stuck,
        CompactionSchedule.MAX_NUDGES_WITHOUT_PROGRESS)).as("fruitless nudges in a row").isFalse();
    // chunks at the target: nothing to gain
    assertThat(CompactionSchedule.shouldNudge(new FileCompaction.Run(true, 1, 8 << 20, 8 << 20,
        CompactionSchedule.TARGET_FILL_RATE, 100, 1_000_000, false), 0)).isFalse();
    // a run that did something (more steps, or work left), a failed run, a file served elsewhere
    assertThat(CompactionSchedule.shouldNudge(run(true), 0)).isFalse();
    assertThat(CompactionSchedule.shouldNudge(new FileCompaction.Run(true, 3, 9 << 20, 8 << 20,
        35, 100, 1_000_000, false), 0)).isFalse();
    assertThat(CompactionSchedule.shouldNudge(null, 0)).isFalse();
    assertThat(CompactionSchedule.shouldNudge(new FileCompaction.Run(false, 1, 0, 0, 35, 100,
        0, false), 0)).isFalse();
  }

  /**
   * A real file whose chunks are mostly dead but younger than H2's retention time: nothing can be
   * rewritten yet, so every run does nothing while the chunks are below the target. The schedule
   * commits (the store version moves) after such a run only up to its bound, and then leaves the
   * idle file alone.
   */
  @Test
  void aStuckScheduleCommitsAFewTimesAndThenLeavesTheIdleFileAlone() throws Exception {
    JdbcDataSource h2 = fileDatabase("nudge");
    try (Connection keepOpen = h2.getConnection(); Statement s = keepOpen.createStatement()) {
      createNudgedTable(s);
      s.execute("CREATE TABLE filler (id INT PRIMARY KEY, b VARBINARY)");
      try (PreparedStatement insert =
          keepOpen.prepareStatement("INSERT INTO filler VALUES (?, ?)")) {
        for (int i = 0; i < 200; i++) { // one commit, so one chunk, each
          insert.setInt(1, i);
          insert.setBytes(2, new byte[2048]);
          insert.executeUpdate();
        }
      }
      s.execute("DELETE FROM filler WHERE id >= 10");
      assertThat(chunksFillRate(keepOpen)).as("the chunks' live share")
          .isLessThan(CompactionSchedule.TARGET_FILL_RATE);
      // an interval the test never reaches: the runs below are the test's own, one at a time
      try (CompactionSchedule schedule = new CompactionSchedule(h2,
          dir.resolve("nudge.mv.db"), Duration.ofHours(1), BUDGET)) {
        List<Long> commitsPerRun = new ArrayList<>();
        for (int i = 0; i < CompactionSchedule.MAX_NUDGES_WITHOUT_PROGRESS + 3; i++) {
          long before = FileCompaction.storeVersion(h2);
          FileCompaction.Run run = schedule.runAndNudge();
          assertThat(run.servedHere()).isTrue();
          assertThat(run.madeProgress()).as("run %d rewrote or moved something", i).isFalse();
          commitsPerRun.add(FileCompaction.storeVersion(h2) - before);
        }
        // one nudge after each of the first stuck runs, then none: the idle file is left alone
        assertThat(commitsPerRun).containsExactly(1L, 1L, 1L, 0L, 0L, 0L);
      }
      try (ResultSet rs = s.executeQuery("SELECT id FROM outbox_schema_lock")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).as("the nudged row").isEqualTo(1);
        assertThat(rs.next()).isFalse();
      }
    }
  }

  /**
   * A run after which nobody committed is followed by one whose steps rewrite more; a commit in
   * between (the test's insert) brings the small steps back. The runs are the test's own calls.
   */
  @Test
  void theStepsGrowOnlyAfterARunAfterWhichNobodyCommitted() throws Exception {
    JdbcDataSource h2 = fileDatabase("idle");
    try (Connection keepOpen = h2.getConnection(); Statement s = keepOpen.createStatement()) {
      createNudgedTable(s);
      s.execute("CREATE TABLE t (id INT PRIMARY KEY)");
      try (CompactionSchedule schedule = new CompactionSchedule(h2,
          dir.resolve("idle.mv.db"), Duration.ofHours(1), BUDGET)) {
        List<CompactionSchedule.StepLimits> limits = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          if (i == 3) {
            s.executeUpdate("INSERT INTO t VALUES (1)"); // auto-commit
          }
          assertThat(schedule.runAndNudge().servedHere()).isTrue();
          limits.add(schedule.lastLimits());
        }
        CompactionSchedule.StepLimits busy = CompactionSchedule.BUSY;
        CompactionSchedule.StepLimits idle = CompactionSchedule.IDLE;
        assertThat(idle.rewriteBytes()).isGreaterThan(busy.rewriteBytes());
        assertThat(idle.moveBytes()).as("room to move what one idle step rewrites")
            .isGreaterThan(idle.rewriteBytes());
        // the first run has no run before it; the fourth follows the insert
        assertThat(limits).containsExactly(busy, idle, idle, busy, idle);
      }
    }
    assertThat(CompactionSchedule.limits(-1, -1)).as("not served here")
        .isEqualTo(CompactionSchedule.BUSY);
  }

  /** A plain H2 file database in the test's folder, each commit written at once. */
  private JdbcDataSource fileDatabase(String name) {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:" + dir.resolve(name) + ";WRITE_DELAY=0");
    return h2;
  }

  /** The one-row table of every store's schema that the nudge rewrites. */
  private static void createNudgedTable(Statement s) throws SQLException {
    s.execute("CREATE TABLE outbox_schema_lock (id INT PRIMARY KEY)");
    s.execute("INSERT INTO outbox_schema_lock VALUES (1)");
  }

  private static int chunksFillRate(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT SETTING_VALUE "
        + "FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'info.CHUNKS_FILL_RATE'")) {
      rs.next();
      return Integer.parseInt(rs.getString(1));
    }
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
