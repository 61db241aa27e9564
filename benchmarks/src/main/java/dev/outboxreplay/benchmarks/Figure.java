package dev.outboxreplay.benchmarks;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.DoublePredicate;

/**
 * One row of the benchmark table: a figure measured in every round, usually as a ratio to a
 * baseline measured in the same round, with its target.
 *
 * @param name what was measured
 * @param baseline what it is divided by (measured in the same run), or what it is compared with
 * @param values one value per round
 * @param target the target as text, for example {@code >= 0.90}
 * @param met whether the median meets the target
 */
record Figure(String name, String baseline, double[] values, String target, DoublePredicate met) {
  /** A ratio that should be at least {@code floor}. */
  static Figure atLeast(String name, String baseline, double[] ratios, double floor) {
    return new Figure(name, baseline, ratios.clone(),
        String.format(Locale.ROOT, ">= %.2f", floor), v -> v >= floor);
  }

  /** A ratio that should be at most {@code ceiling}. */
  static Figure atMost(String name, String baseline, double[] ratios, double ceiling) {
    return new Figure(name, baseline, ratios.clone(),
        String.format(Locale.ROOT, "<= %.2f", ceiling), v -> v <= ceiling);
  }

  /** A value that should stay below {@code ceiling}. */
  static Figure below(String name, String baseline, double[] values, double ceiling) {
    return new Figure(name, baseline, values.clone(),
        String.format(Locale.ROOT, "< %.0f", ceiling), v -> v < ceiling);
  }

  /** A figure printed for reference, without a target. */
  static Figure reported(String name, String baseline, double[] values) {
    return new Figure(name, baseline, values.clone(), "-", v -> true);
  }

  /** Element-wise {@code a[i] / b[i]}. */
  static double[] ratios(double[] a, double[] b) {
    double[] r = new double[a.length];
    for (int i = 0; i < a.length; i++) {
      r[i] = a[i] / b[i];
    }
    return r;
  }

  double median() {
    return BenchSupport.median(values);
  }

  /** Prints {@code figures} as one Markdown table. */
  static void printTable(List<Figure> figures) {
    System.out.println();
    System.out.printf("machine: %d cores, Java %s, %s %s%n",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
        System.getProperty("os.name"), System.getProperty("os.arch"));
    System.out.println("| figure | baseline (same run) | median | min | max | target | met |");
    System.out.println("|---|---|---|---|---|---|---|");
    for (Figure f : figures) {
      double[] sorted = f.values.clone();
      Arrays.sort(sorted);
      System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.2f | %.2f | %s | %s |%n", f.name,
          f.baseline, f.median(), sorted[0], sorted[sorted.length - 1], f.target,
          f.target.equals("-") ? "-" : f.met.test(f.median()) ? "yes" : "**no**");
    }
  }
}
