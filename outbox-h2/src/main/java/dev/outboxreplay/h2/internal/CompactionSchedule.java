package dev.outboxreplay.h2.internal;

import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs {@link FileCompaction#run} on one daemon thread every {@code interval}, each run bounded
 * by {@code budget}. In a process that reaches the file through another process's server a run
 * does nothing (the serving process compacts); after a handover the new serving process does.
 * Closing stops it by a flag and waits for a run in progress; it never interrupts the thread,
 * since an interrupt during a file write closes H2's file channel for the whole JVM.
 */
public final class CompactionSchedule implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CompactionSchedule.class);
  /** Steps rewrite and move only while the live share of the space is at or below this. */
  static final int TARGET_FILL_RATE = 80;
  /** Bytes of live pages one step rewrites at most (about; H2 stops after the chunk past it). */
  static final int REWRITE_BYTES = 1 << 20;
  /** Bytes of chunks one step moves toward the start of the file at most. */
  static final long MOVE_BYTES = 4L << 20;

  private final DataSource dataSource;
  private final Path file;
  private final Duration budget;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile boolean warned;

  /** Starts the schedule; the first run is one {@code interval} after now. */
  public CompactionSchedule(DataSource dataSource, Path file, Duration interval, Duration budget) {
    this.dataSource = dataSource;
    this.file = file;
    this.budget = budget;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "outbox-h2-compaction:" + file.getFileName());
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::runOnce, interval.toNanos(), interval.toNanos(),
        TimeUnit.NANOSECONDS);
  }

  /** Runs one compaction of the database behind {@code dataSource} now, up to {@code budget}. */
  public static FileCompaction.Run runNow(DataSource dataSource, Duration budget)
      throws SQLException {
    return FileCompaction.run(dataSource, budget.toNanos(), TARGET_FILL_RATE, REWRITE_BYTES,
        MOVE_BYTES);
  }

  private void runOnce() {
    if (stopped.get()) {
      return;
    }
    try {
      FileCompaction.Run run = runNow(dataSource, budget);
      if (run.servedHere() && LOG.isDebugEnabled()) {
        LOG.debug("compacted {}: {} -> {} bytes in {} step(s), longest {} ms; chunks {}% live, "
            + "file {}% live", file, run.sizeBefore(), run.sizeAfter(), run.steps(),
            run.longestStepNanos() / 1_000_000, run.chunksFillRate(), run.fileFillRate());
      }
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
    }
  }

  /**
   * Stops the schedule and waits for a run in progress to end (its budget plus 5 s at most),
   * without interrupting it. Idempotent.
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
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
