package dev.outboxreplay.testkit.sim;

/** Runs seeded schedules one after another and names the seed of the one that fails. */
public final class Schedules {
  private Schedules() {}

  /** One schedule, run with the choices its seed makes. */
  @FunctionalInterface
  public interface Schedule {
    SimulationStats run(Choices choices);
  }

  /**
   * Runs {@code count} schedules seeded {@code seed}, {@code seed + 1}, ... and adds up what they
   * did.
   *
   * @throws AssertionError of the first schedule that fails, naming its seed and how to run it
   *     alone ({@code -D<seedProperty>=S -Dsim.schedules=1})
   */
  public static SimulationStats run(long seed, int count, String seedProperty,
      Schedule schedule) {
    SimulationStats total = new SimulationStats();
    for (int i = 0; i < count; i++) {
      long scheduleSeed = seed + i;
      try {
        total.add(schedule.run(Choices.seeded(scheduleSeed)));
      } catch (AssertionError e) {
        throw new AssertionError("schedule seed " + scheduleSeed + " (rerun it alone with -D"
            + seedProperty + "=" + scheduleSeed + " -Dsim.schedules=1): " + e.getMessage(), e);
      }
    }
    return total;
  }
}
