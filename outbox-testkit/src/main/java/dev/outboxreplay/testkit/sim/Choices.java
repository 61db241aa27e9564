package dev.outboxreplay.testkit.sim;

import java.util.SplittableRandom;

/**
 * Where every decision of a simulated schedule comes from: a seeded generator, or a fuzzer's
 * bytes. One {@code Choices} drives one schedule; the same choices give the same schedule.
 * Implementations are called from one thread at a time.
 */
public interface Choices {
  /** A value in {@code [0, bound)}; {@code bound >= 1}. */
  int pick(int bound);

  /** True with about {@code percent} percent probability. */
  default boolean chance(int percent) {
    return pick(100) < percent;
  }

  /** A seed for a generator the engine takes (retry jitter, command ids). */
  long nextSeed();

  /** Choices drawn from {@code seed}. */
  static Choices seeded(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    return new Choices() {
      @Override
      public synchronized int pick(int bound) {
        return random.nextInt(bound);
      }

      @Override
      public synchronized long nextSeed() {
        return random.nextLong();
      }
    };
  }
}
