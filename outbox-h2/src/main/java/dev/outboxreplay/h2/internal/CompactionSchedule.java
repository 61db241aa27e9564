package dev.outboxreplay.h2.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs {@link FileCompaction#run} on one daemon thread every {@code interval}, each run bounded
 * by {@code budget}. A run that the budget ended while there was still work to do is followed
 * by the next one after {@link #CATCH_UP_PAUSES} budgets instead of a whole interval (at most a
 * fifth of the time compacting), until a run finishes its work: under sustained writes (a
 * backlog draining) H2 leaves sparse chunks behind faster than one budget per interval rewrites
 * them, and the file and the chunk metadata H2 keeps in memory grew without bound. A run after
 * which nobody committed is followed by one in larger steps ({@link #limits}). A run that
 * found nothing to do while the chunks are below the target fill rate is followed by one data
 * commit that changes nothing ({@link #shouldNudge}): in a database nobody writes to, H2 never
 * rewrites its newest chunks, and the file stopped at several times its live data. In a process
 * that reaches the file through another process's server a run
 * does nothing (the serving process compacts); after a handover the new serving process does.
 * Closing stops it by a flag and waits for a run in progress; it never interrupts the thread,
 * since an interrupt during a file write closes H2's file channel for the whole JVM. Then it
 * runs once more, the compaction at close.
 */
public final class CompactionSchedule implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CompactionSchedule.class);
  /** Steps rewrite and move only while the live share of the space is at or below this. */
  static final int TARGET_FILL_RATE = 80;
  /**
   * What one step may rewrite and move at most: rewrite bytes of live pages (about; H2 stops
   * after the chunk past it), move bytes of chunks toward the start of the file.
   */
  record StepLimits(int rewriteBytes, long moveBytes) {}

  /** Steps while others write (the longest measured are in docs/h2-file-handling.md). */
  static final StepLimits BUSY = new StepLimits(1 << 20, 4L << 20);
  /**
   * Steps after a run after which nobody committed ({@link #limits}): the rewrite size of H2's own
   * {@code compactStore}, and moves large enough to take the chunks such a rewrite writes: H2
   * moves no chunk larger than the move limit, and with 4 MB moves after 16 MB rewrites an idle
   * file stayed at three times its compacted copy with a third of it free.
   */
  static final StepLimits IDLE = new StepLimits(16 << 20, 32L << 20);
  /** After a run that ended with work left, the next one comes after this many budgets. */
  static final int CATCH_UP_PAUSES = 4;
  /** Nudges in a row (see {@link #shouldNudge}) while no run rewrites or shrinks anything. */
  static final int MAX_NUDGES_WITHOUT_PROGRESS = 3;
  /**
   * The nudge: one data commit that changes nothing, on the one row of the migration lock table
   * every store's schema has (docs/table-layout.md).
   */
  private static final String NUDGE = "UPDATE outbox_schema_lock SET id = id WHERE id = 1";

  private final DataSource dataSource;
  private final Path file;
  private final Duration interval;
  private final Duration budget;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile boolean warned;
  /** Nudges since the last run that rewrote or shrank something; one thread's at a time. */
  private int nudgesWithoutProgress;
  /** The store's version when the last run and its nudge ended; -1 before the first. */
  private long versionAfterLastRun = -1;
  /** The limits of the last run's steps ({@link #limits}); for tests. */
  private StepLimits lastLimits;

  /** Starts the schedule; the first run is one {@code interval} after now. */
  public CompactionSchedule(DataSource dataSource, Path file, Duration interval, Duration budget) {
    this.dataSource = dataSource;
    this.file = file;
    this.interval = interval;
    this.budget = budget;
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "outbox-h2-compaction:" + file.getFileName());
      t.setDaemon(true);
      return t;
    });
    // close() must not wait for the next run, which may be an interval away
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.timer = executor;
    timer.schedule(this::runAndReschedule, interval.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Whether to make one data commit after {@code run}: it did nothing (rewrote nothing, shrank
   * nothing) while the live share of the chunks is below the target. H2 rewrites no chunk of the
   * two newest versions of the store, and in a database nobody writes to they stay the newest:
   * measured, an idle file stayed at 6-8.5 MB with its chunks a third live until one commit let
   * the next runs bring it to 3-4 MB (docs/h2-file-handling.md). At most {@link
   * #MAX_NUDGES_WITHOUT_PROGRESS} in a row while runs stay fruitless, so an idle file whose chunks
   * stay below the target for another reason is not written to every interval.
   */
  static boolean shouldNudge(FileCompaction.Run run, int nudgesWithoutProgress) {
    return run != null && run.servedHere() && !run.madeProgress()
        && run.chunksFillRate() < TARGET_FILL_RATE
        && nudgesWithoutProgress < MAX_NUDGES_WITHOUT_PROGRESS;
  }

  /**
   * The limits of the next run's steps: {@link #IDLE} when the store's version has not moved
   * since the last run ended (nobody committed since, so nobody is likely to wait for the lock),
   * else {@link #BUSY}. Measured (docs/h2-file-handling.md): with 1 MB rewrites an idle file after a
   * large burst kept rewriting with its chunks about 60% live and stayed at 3.2-3.7 times its
   * compacted copy; with 16 MB rewrites the chunks reached 88-94% live, the rewriting stopped,
   * and the file settled at 2.0-2.5 times. Each step's rewritten leaf pages carry the inner
   * pages above them, which the next step writes again: fewer, larger steps leave less of that
   * behind.
   */
  static StepLimits limits(long versionAfterLastRun, long versionNow) {
    return versionAfterLastRun >= 0 && versionNow == versionAfterLastRun ? IDLE : BUSY;
  }

  /** When the run after {@code run} comes: soon while work is left, else after the interval. */
  static Duration nextDelay(FileCompaction.Run run, Duration interval, Duration budget) {
    if (run == null || !run.workLeft()) {
      return interval;
    }
    Duration catchUp = budget.multipliedBy(CATCH_UP_PAUSES);
    return catchUp.compareTo(interval) < 0 ? catchUp : interval;
  }

  private void runAndReschedule() {
    FileCompaction.Run run = runAndNudge();
    if (!stopped.get()) {
      try {
        timer.schedule(this::runAndReschedule, nextDelay(run, interval, budget).toNanos(),
            TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException closing) {
        // close() shut the timer down after the check above
      }
    }
  }

  /**
   * Runs one compaction of the database behind {@code dataSource} now, up to {@code budget}, in
   * {@link #BUSY} steps.
   */
  public static FileCompaction.Run runNow(DataSource dataSource, Duration budget)
      throws SQLException {
    return runNow(dataSource, budget, BUSY);
  }

  private static FileCompaction.Run runNow(DataSource dataSource, Duration budget,
      StepLimits limits) throws SQLException {
    return FileCompaction.run(dataSource, budget.toNanos(), TARGET_FILL_RATE,
        limits.rewriteBytes(), limits.moveBytes());
  }

  /**
   * One run, followed by a nudge when {@link #shouldNudge} says so. Called by the schedule's
   * thread; a test with a long interval calls it itself instead.
   *
   * @return the run; null when stopped or when it failed
   */
  FileCompaction.Run runAndNudge() {
    lastLimits = limits(versionAfterLastRun, storeVersion());
    FileCompaction.Run run = runOnce(lastLimits);
    if (run != null && run.madeProgress()) {
      nudgesWithoutProgress = 0;
    } else if (!stopped.get() && shouldNudge(run, nudgesWithoutProgress)) {
      nudgesWithoutProgress++;
      nudge();
    }
    versionAfterLastRun = storeVersion();
    return run;
  }

  /** The limits of the steps of the last {@link #runAndNudge}. */
  StepLimits lastLimits() {
    return lastLimits;
  }

  /** The store's version; -1 when stopped, not served here, or it cannot be read. */
  private long storeVersion() {
    if (stopped.get()) {
      return -1;
    }
    try {
      return FileCompaction.storeVersion(dataSource);
    } catch (SQLException | RuntimeException e) {
      return -1; // said by the run, which fails the same way
    }
  }

  /** Commits {@link #NUDGE}; a file without the table, or a failure, is left as it is. */
  private void nudge() {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.executeUpdate(NUDGE);
      if (!c.getAutoCommit()) {
        c.commit();
      }
      LOG.debug("nudged the compaction of {}: one commit that changes nothing", file);
    } catch (SQLException | RuntimeException e) {
      LOG.debug("nudging the compaction of {} failed: {}", file, e.toString());
    }
  }

  /** One run of up to the budget in steps of {@code limits}, logged at debug. */
  private FileCompaction.Run runLogged(StepLimits limits) throws SQLException {
    FileCompaction.Run run = runNow(dataSource, budget, limits);
    if (run.servedHere() && LOG.isDebugEnabled()) {
      LOG.debug("compacted {}{}: {} -> {} bytes in {} step(s) of up to {} KB, longest {} ms; "
          + "chunks {}% live, file {}% live; work left: {}", file,
          stopped.get() ? " at close" : "", run.sizeBefore(), run.sizeAfter(), run.steps(),
          limits.rewriteBytes() >> 10, run.longestStepNanos() / 1_000_000,
          run.chunksFillRate(), run.fileFillRate(), run.workLeft());
    }
    return run;
  }

  /** One run; null when stopped or when it failed. */
  private FileCompaction.Run runOnce(StepLimits limits) {
    if (stopped.get()) {
      return null;
    }
    try {
      return runLogged(limits);
    } catch (SQLException | RuntimeException e) {
      // a handover or a closing pool is passing; anything else is said once, then at debug
      if (warned || stopped.get() || (e instanceof SQLException sql && Handover.isHandover(sql))) {
        LOG.debug("compacting {} failed; tried again in the next interval: {}", file,
            e.toString());
      } else {
        warned = true;
        LOG.warn("compacting {} failed; tried again in the next interval (further failures are "
            + "logged at debug): {}", file, e.toString());
      }
      return null;
    }
  }

  /**
   * Stops the schedule, waits for a run in progress to end (its budget plus 5 s at most) without
   * interrupting it, then runs once more on the calling thread, in {@link #BUSY} steps begun
   * within the budget: the compaction at close, at the database's own retention time, in place of
   * H2's (which the library turns off, see {@code PoolOpener}). A failure of that run is logged,
   * not thrown. Idempotent.
   */
  @Override
  public void close() {
    if (!stopped.compareAndSet(false, true)) {
      return;
    }
    timer.shutdown();
    Duration wait = budget.plusSeconds(5);
    try {
      if (!timer.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS)) {
        LOG.warn("a compaction of {} still runs {} after close was asked; left to finish", file,
            wait);
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    try {
      runLogged(BUSY);
    } catch (SQLException | RuntimeException e) {
      LOG.warn("compacting {} at close failed; it is closed as it is: {}", file, e.toString());
    }
  }
}
