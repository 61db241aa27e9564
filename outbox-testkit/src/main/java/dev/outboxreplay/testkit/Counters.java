package dev.outboxreplay.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Callable;
import java.util.function.LongSupplier;

/** Checks on monotonic counters a component exposes for monitoring (syncs, compactions...). */
public final class Counters {
  private Counters() {}

  /**
   * Runs {@code call} and asserts that {@code counter} grew meanwhile; {@code what} names the
   * call in the failure message.
   *
   * @return what {@code call} returned
   */
  public static <R> R raises(LongSupplier counter, String what, Callable<R> call)
      throws Exception {
    long before = counter.getAsLong();
    R result = call.call();
    assertThat(counter.getAsLong()).as(what).isGreaterThan(before);
    return result;
  }
}
