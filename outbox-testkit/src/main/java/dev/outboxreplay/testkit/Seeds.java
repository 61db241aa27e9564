package dev.outboxreplay.testkit;

/** Seeds for randomized tests: given by a system property to replay a run, else new and printed. */
public final class Seeds {
  private Seeds() {}

  /**
   * The seed in system property {@code property}, or a fresh one; either way printed with the
   * command-line flag that replays it.
   */
  public static long seed(String property, String test) {
    long seed = Long.getLong(property, System.nanoTime());
    System.out.println(test + " seed=" + seed + " (rerun with -D" + property + "=" + seed + ")");
    return seed;
  }
}
