package dev.outboxreplay;

/**
 * Lets tests crash or fail the library at a {@link FailurePoint}. Production code uses
 * {@link #NONE}, which does nothing. An injector simulates a crash by throwing (for example an
 * {@link Error} no library code catches) and the test then reopens the database as a restarted
 * process would.
 */
@FunctionalInterface
public interface FailureInjector {
  /** Does nothing. */
  FailureInjector NONE = point -> {};

  /** Called when execution reaches {@code point}; may throw to simulate a crash or fault. */
  void at(FailurePoint point);
}
