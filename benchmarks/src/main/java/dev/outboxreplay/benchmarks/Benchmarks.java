package dev.outboxreplay.benchmarks;

import dev.outboxreplay.h2.Durability;

/**
 * Entry point. Prints figures next to a baseline measured in the same run.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar accept [operations] [threads] [rounds] [process|power]
 * java -jar benchmarks/target/benchmarks.jar inbox [messages] [rounds]
 * java -jar benchmarks/target/benchmarks.jar server [requests] [concurrency] [rounds]
 * java -jar benchmarks/target/benchmarks.jar replay [commands] [concurrency] [rounds] [entities]
 * java -jar benchmarks/target/benchmarks.jar history [rows] [open] [rounds]
 * </pre>
 */
public final class Benchmarks {
  private Benchmarks() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    String which = args.length > 0 ? args[0] : "accept";
    switch (which) {
      case "accept" -> new AcceptBenchmark(
          intArg(args, 1, 20_000), intArg(args, 2, 8), intArg(args, 3, 5),
          args.length > 4 && args[4].equals("power")
              ? Durability.POWER_LOSS_SAFE : Durability.PROCESS_CRASH_SAFE).run();
      case "inbox" -> new InboxBenchmark(intArg(args, 1, 5_000), intArg(args, 2, 5)).run();
      case "replay" -> new ReplayBenchmark(intArg(args, 1, 10_000), intArg(args, 2, 8),
          intArg(args, 3, 3), intArg(args, 4, 100)).run();
      case "history" -> new HistoryProbe(intArg(args, 1, 1_000_000), intArg(args, 2, 10_000),
          intArg(args, 3, 5)).run();
      case "server" -> new ServerBenchmark(intArg(args, 1, 5_000), intArg(args, 2, 8),
          intArg(args, 3, 3)).run();
      default -> {
        System.err.println("unknown benchmark '" + which
            + "'; available: accept, inbox, server, replay, history");
        System.exit(2);
      }
    }
    System.exit(0); // HTTP client and server pools would otherwise keep the JVM up for a minute
  }

  private static int intArg(String[] args, int index, int fallback) {
    return args.length > index ? Integer.parseInt(args[index]) : fallback;
  }
}
