package dev.outboxreplay.benchmarks;

import dev.outboxreplay.jdbc.Durability;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point. Prints figures next to a baseline measured in the same run.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar all     (every figure below, one table at the end)
 * java -jar benchmarks/target/benchmarks.jar accept [operations] [threads] [rounds] [process|power]
 *     [h2|sqlite]
 * java -jar benchmarks/target/benchmarks.jar inbox [messages] [rounds]
 * java -jar benchmarks/target/benchmarks.jar server [requests] [concurrency] [rounds]
 * java -jar benchmarks/target/benchmarks.jar replay [commands] [concurrency] [rounds] [entities]
 *     [trivial|server] [h2|sqlite]
 * java -jar benchmarks/target/benchmarks.jar history [rows] [open] [rounds] [h2|sqlite]
 * java -jar benchmarks/target/benchmarks.jar filesize [seconds] [pauseMs] [simSecsPerCmd] [on|off]
 * java -jar benchmarks/target/benchmarks.jar filesize-sqlite [cycles] [simSecsPerCmd]
 * java -jar benchmarks/target/benchmarks.jar gruelbox [commands] [threads] [rounds]
 * java -Xmx64m -jar benchmarks/target/benchmarks.jar drain [commands] [h2|sqlite]
 * java -jar benchmarks/target/benchmarks.jar stalled [requests] [count...]
 * java -jar benchmarks/target/benchmarks.jar floor [commands] [group] [rounds] [h2|sqlite]
 * java -jar benchmarks/target/benchmarks.jar engines [commands] [threads] [rounds]  (SQLite vs H2)
 * </pre>
 */
public final class Benchmarks {
  private Benchmarks() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    String which = args.length > 0 ? args[0] : "accept";
    List<Figure> figures = new ArrayList<>();
    switch (which) {
      case "all" -> {
        // each benchmark at its default size, fewer rounds: about 28 minutes on 2 cores
        // accept: 5 rounds, its single-thread ratio spread 0.69-0.90 over 3 rounds of one run here
        figures.addAll(new AcceptBenchmark(20_000, 8, 5, Durability.PROCESS_CRASH_SAFE).run());
        figures.addAll(new AcceptBenchmark(20_000, 8, 5, Durability.PROCESS_CRASH_SAFE,
            BenchEngine.SQLITE).run());
        figures.addAll(new InboxBenchmark(5_000, 3).run());
        figures.addAll(new ServerBenchmark(5_000, 8, 3).run());
        figures.addAll(new ReplayBenchmark(10_000, 8, 3, 100).run());
        figures.addAll(new ReplayBenchmark(4_000, 1, 3, 1).run());
        figures.addAll(new ReplayBenchmark(10_000, 8, 3, 100, true,
            BenchEngine.H2).run());
        figures.addAll(new ReplayBenchmark(10_000, 8, 3, 100, true,
            BenchEngine.SQLITE).run());
        figures.addAll(new FloorProbe(20_000, 8, 3).run());
        figures.addAll(new FloorProbe(20_000, 8, 3, BenchEngine.SQLITE).run());
        figures.addAll(new HistoryProbe(1_000_000, 10_000, 5).run());
        figures.addAll(new HistoryProbe(1_000_000, 10_000, 5, BenchEngine.SQLITE).run());
        figures.addAll(new FileSizeProbe(60, 5, 60, true).run());
        figures.addAll(new SqliteFileSizeProbe(200_000, 60).run()); // about 3 min here
        figures.addAll(new StalledClientsProbe(new int[] {16, 128, 255}, 20).run());
        figures.addAll(new EngineBenchmark(10_000, 8, 4).run());
        figures.addAll(new GruelboxBenchmark(5_000, 8, 3).run());
      }
      case "receiver-pg" -> figures.addAll(new PostgresReceiverBenchmark(intArg(args, 1, 5_000),
          intArg(args, 2, 8), intArg(args, 3, 3),
          args.length > 4 && args[4].equals("durable")).run());
      case "gruelbox" -> figures.addAll(new GruelboxBenchmark(intArg(args, 1, 5_000),
          intArg(args, 2, 8), intArg(args, 3, 5)).run());
      case "engines" -> figures.addAll(new EngineBenchmark(intArg(args, 1, 10_000),
          intArg(args, 2, 8), intArg(args, 3, 4)).run());
      case "accept" -> figures.addAll(new AcceptBenchmark(
          intArg(args, 1, 20_000), intArg(args, 2, 8), intArg(args, 3, 5),
          args.length > 4 && args[4].equals("power")
              ? Durability.POWER_LOSS_SAFE : Durability.PROCESS_CRASH_SAFE,
          BenchEngine.of(args, 5)).run());
      case "inbox" -> figures.addAll(
          new InboxBenchmark(intArg(args, 1, 5_000), intArg(args, 2, 5)).run());
      case "replay" -> figures.addAll(new ReplayBenchmark(intArg(args, 1, 10_000),
          intArg(args, 2, 8), intArg(args, 3, 3), intArg(args, 4, 100),
          args.length > 5 && args[5].equals("trivial"),
          BenchEngine.of(args, 6)).run());
      case "history" -> figures.addAll(new HistoryProbe(intArg(args, 1, 1_000_000),
          intArg(args, 2, 10_000), intArg(args, 3, 5), BenchEngine.of(args, 4)).run());
      case "filesize" -> figures.addAll(new FileSizeProbe(intArg(args, 1, 120),
          intArg(args, 2, 5), intArg(args, 3, 60), !(args.length > 4 && args[4].equals("off")))
          .run());
      case "filesize-sqlite" -> figures.addAll(new SqliteFileSizeProbe(
          intArg(args, 1, 1_000_000), intArg(args, 2, 60)).run());
      case "drain" -> figures.addAll(new DrainProbe(intArg(args, 1, 1_000_000),
          BenchEngine.of(args, 2)).run());
      case "server" -> figures.addAll(new ServerBenchmark(intArg(args, 1, 5_000),
          intArg(args, 2, 8), intArg(args, 3, 3)).run());
      case "stalled" -> figures.addAll(new StalledClientsProbe(args.length > 2
          ? java.util.Arrays.stream(args, 2, args.length).mapToInt(Integer::parseInt).toArray()
          : new int[] {16, 128, 255, 300}, intArg(args, 1, 20)).run());
      case "floor" -> figures.addAll(new FloorProbe(intArg(args, 1, 20_000),
          intArg(args, 2, 8), intArg(args, 3, 3), BenchEngine.of(args, 4)).run());
      default -> {
        System.err.println("unknown benchmark '" + which
            + "'; available: all, accept, inbox, server, replay, history, filesize, "
            + "filesize-sqlite, drain, stalled, floor, engines, gruelbox, receiver-pg");
        System.exit(2);
      }
    }
    Figure.printTable(figures);
    System.exit(0); // HTTP client and server pools would otherwise keep the JVM up for a minute
  }

  private static int intArg(String[] args, int index, int fallback) {
    return args.length > index ? Integer.parseInt(args[index]) : fallback;
  }
}
