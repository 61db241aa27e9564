package dev.outboxreplay.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that moves only when told to, so tests and simulations never wait on real time.
 * Thread-safe.
 */
public final class ManualClock extends Clock {
  private volatile Instant now;

  public ManualClock(Instant start) {
    this.now = start;
  }

  /** Starts at 2026-01-01T00:00:00Z. */
  public static ManualClock startingAtEpoch2026() {
    return new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
  }

  /** Moves the clock forward by {@code step}. */
  public synchronized void advance(Duration step) {
    if (step.isNegative()) {
      throw new IllegalArgumentException("step < 0: " + step);
    }
    now = now.plus(step);
  }

  /** Sets the time; may move backwards, to test clock steps. */
  public void set(Instant instant) {
    now = instant;
  }

  @Override
  public Instant instant() {
    return now;
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("ManualClock is always UTC");
  }
}
