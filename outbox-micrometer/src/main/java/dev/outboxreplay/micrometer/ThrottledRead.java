package dev.outboxreplay.micrometer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A value read again only once the last read is {@code maxAge} old by {@code clock}, so that
 * many gauges and scrapes cost one query. Thread-safe: two readers at the boundary may both read;
 * either result is kept.
 */
final class ThrottledRead<T> {
  private final Supplier<T> read;
  private final Clock clock;
  private final Duration maxAge;
  private volatile T value;
  private volatile Instant readAt = Instant.MIN;

  ThrottledRead(Supplier<T> read, Clock clock, Duration maxAge) {
    this.read = Objects.requireNonNull(read, "read == null");
    this.clock = Objects.requireNonNull(clock, "clock == null");
    this.maxAge = Objects.requireNonNull(maxAge, "maxAge == null");
  }

  T get() {
    Instant now = clock.instant();
    T current = value;
    if (current == null || !now.isBefore(readAt.plus(maxAge))) {
      current = read.get();
      value = current;
      readAt = now;
    }
    return current;
  }
}
