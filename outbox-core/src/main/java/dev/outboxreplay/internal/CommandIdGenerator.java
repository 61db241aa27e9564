package dev.outboxreplay.internal;

import dev.outboxreplay.CommandId;
import java.time.Clock;
import java.util.UUID;
import java.util.random.RandomGenerator;

/**
 * Version 7 UUIDs (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter that keeps ids
 * strictly increasing within one generator even when the clock stalls or steps back, then 62
 * random bits. Clock and randomness are injected so a simulation can replay ids from a seed.
 *
 * <p>Thread-safe.
 */
public final class CommandIdGenerator {
  private static final int COUNTER_BITS = 12;
  private static final long COUNTER_MAX = (1L << COUNTER_BITS) - 1;

  private final Clock clock;
  private final RandomGenerator random;
  private long lastMillis = -1;
  private long counter;

  public CommandIdGenerator(Clock clock, RandomGenerator random) {
    this.clock = clock;
    this.random = random;
  }

  /** The next id; strictly greater than every id this generator returned before. */
  public synchronized CommandId next() {
    long now = clock.millis();
    if (now > lastMillis) {
      lastMillis = now;
      counter = random.nextLong(COUNTER_MAX / 2 + 1);
    } else if (counter < COUNTER_MAX) {
      counter++;
    } else {
      lastMillis++;
      counter = 0;
    }
    long high = (lastMillis & 0xFFFF_FFFF_FFFFL) << 16 | 0x7000L | counter;
    long low = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
    return new CommandId(new UUID(high, low));
  }
}
