package dev.outboxreplay.internal;

import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import java.util.concurrent.atomic.AtomicInteger;

/** Counters of one replay pass. */
public final class PassCounters {
  public final AtomicInteger claimed = new AtomicInteger();
  public final AtomicInteger acked = new AtomicInteger();
  public final AtomicInteger reconciled = new AtomicInteger();
  public final AtomicInteger retried = new AtomicInteger();
  public final AtomicInteger unknown = new AtomicInteger();
  public final AtomicInteger conflicts = new AtomicInteger();
  public final AtomicInteger rejected = new AtomicInteger();
  public final AtomicInteger released = new AtomicInteger();
  public final AtomicInteger fencedOff = new AtomicInteger();

  public PassSummary summary(Reason pausedReason) {
    return new PassSummary(claimed.get(), acked.get(), reconciled.get(), retried.get(),
        unknown.get(), conflicts.get(), rejected.get(), released.get(), fencedOff.get(),
        pausedReason);
  }
}
