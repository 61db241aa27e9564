package dev.outboxreplay.h2.internal;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs a database call again while the process serving a shared file is being replaced (the
 * server died or closed and another process takes the file over). Only for calls that are safe
 * to run again whatever the failed try did: an idempotent write (an accept by its stable command
 * id, an inbox consume that first reserves the message id), or a read.
 *
 * <p>How long a takeover takes is H2's: the next opener waits until the lock file is 2 s old
 * (its lock-file time granularity), then sees the dead owner's lock socket refuse and takes the
 * file. Measured here: 1.3-1.9 s with one process left; when two processes race to take over,
 * the one that loses waits for the winner's new lock file to age too, up to about 5.5 s.
 */
public final class Handover {
  /**
   * Longest a call keeps retrying through a handover, counted from its first failure (the first
   * try may itself have waited, for example for a connection), before its failure is returned.
   */
  public static final Duration RETRY_FOR = Duration.ofSeconds(10);
  private static final long FIRST_PAUSE_MILLIS = 10;
  private static final long LONGEST_PAUSE_MILLIS = 200;

  /** A database call that may throw. */
  @FunctionalInterface
  public interface SqlCall<R> {
    R call() throws SQLException;
  }

  private Handover() {}

  /**
   * Runs {@code call}; while it fails because the file's server went away ({@link
   * #isHandover(SQLException)}), runs it again after a short jittered pause, for up to {@link
   * #RETRY_FOR} after the first failure. Any other failure, or one after the bound, is thrown as
   * is.
   */
  public static <R> R retry(SqlCall<R> call) throws SQLException {
    return retry(call, e -> false);
  }

  /**
   * As {@link #retry(SqlCall)}, and also runs {@code call} again while it fails with an error
   * {@code alsoRetry} accepts.
   */
  public static <R> R retry(SqlCall<R> call, java.util.function.Predicate<SQLException> alsoRetry)
      throws SQLException {
    return retry(call, alsoRetry, RETRY_FOR);
  }

  /**
   * As {@link #retry(SqlCall, java.util.function.Predicate)}, retrying for up to {@code retryFor}
   * after the first failure instead of {@link #RETRY_FOR}.
   */
  public static <R> R retry(SqlCall<R> call, java.util.function.Predicate<SQLException> alsoRetry,
      Duration retryFor) throws SQLException {
    return retry(call, alsoRetry, retryFor, false, Pacing.SYSTEM);
  }

  /**
   * As {@link #retry(SqlCall)}, but runs {@code call} again only while less than {@code within}
   * has passed since this method was called: for a call that itself already retries for a while
   * (each pool opened retries its own connections), so that the two bounds do not add up.
   */
  public static <R> R retryWithin(SqlCall<R> call, Duration within) throws SQLException {
    return retryWithin(call, within, Pacing.SYSTEM);
  }

  /** As {@link #retryWithin(SqlCall, Duration)}, with the time and pauses of {@code pacing}. */
  static <R> R retryWithin(SqlCall<R> call, Duration within, Pacing pacing) throws SQLException {
    return retry(call, e -> false, within, true, pacing);
  }

  /**
   * The retry loop. The bound counts from the first failure (which is always tried once more),
   * or with {@code fromStart} from the first try.
   */
  private static <R> R retry(SqlCall<R> call, java.util.function.Predicate<SQLException> alsoRetry,
      Duration bound, boolean fromStart, Pacing pacing) throws SQLException {
    long boundNanos = bound.toNanos();
    boolean counting = fromStart;
    long since = fromStart ? pacing.nanoTime() : 0;
    long pause = FIRST_PAUSE_MILLIS;
    while (true) {
      try {
        return call.call();
      } catch (SQLException e) {
        if (!(isHandover(e) || alsoRetry.test(e))) {
          throw e;
        }
        long now = pacing.nanoTime();
        if (!counting) {
          counting = true;
          since = now;
        } else if (now - since >= boundNanos) {
          throw e;
        }
        if (Thread.currentThread().isInterrupted()) {
          throw e;
        }
        pacing.pause(pause);
        pause = Math.min(pause * 2, LONGEST_PAUSE_MILLIS);
      }
    }
  }

  /** The time a retry loop reads and how it pauses; {@link #SYSTEM} but in tests. */
  interface Pacing {
    /** The JVM's monotonic clock and a park of {@code millis} to twice that, at random. */
    Pacing SYSTEM = new Pacing() {
      @Override
      public long nanoTime() {
        return System.nanoTime();
      }

      @Override
      public void pause(long millis) {
        LockSupport.parkNanos(Duration.ofMillis(
            millis + ThreadLocalRandom.current().nextLong(millis)).toNanos());
      }
    };

    long nanoTime();

    /** Pauses for at least {@code millis} and less than twice that. */
    void pause(long millis);
  }

  /**
   * True when {@code e} says the database behind the connection went away or no connection could
   * be made yet (H2's closed or broken database, a connection-class SQL state, the pool timing out
   * while the new server starts, H2's lock-file races): a new try reaches the process that took
   * the file over. Row-lock timeouts are not included: they already waited their full time.
   */
  public static boolean isHandover(SQLException e) {
    String state = e.getSQLState();
    return H2Errors.isBrokenConnection(e) || H2Errors.isOpenRace(e)
        || e instanceof java.sql.SQLTransientConnectionException
        || (state != null && state.startsWith("08"));
  }

  /** The first {@link SQLException} in {@code failure}'s cause chain that is a handover. */
  public static SQLException handoverCause(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && isHandover(sql)) {
        return sql;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }
}
