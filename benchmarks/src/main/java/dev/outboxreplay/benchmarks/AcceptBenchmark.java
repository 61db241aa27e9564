package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Accepts per second next to a raw JDBC insert+commit of the same row into the same table of an
 * H2 or SQLite file with the same durability settings (SQLite's {@code synchronous} level; H2's
 * write delay and, for power-loss safety, a synced checkpoint after each commit), all measured in
 * this run. Each round measures every mode twice, in mirrored order, each time on a fresh database
 * file; each figure is the median over {@code rounds} rounds.
 */
final class AcceptBenchmark {
  private final int operations;
  private final int threads;
  private final int rounds;
  private final Durability durability;
  private final BenchEngine engine;
  private final AtomicInteger counter = new AtomicInteger();
  private final RawOutboxRow rawRow = new RawOutboxRow();

  AcceptBenchmark(int operations, int threads, int rounds, Durability durability) {
    this(operations, threads, rounds, durability, BenchEngine.H2);
  }

  AcceptBenchmark(int operations, int threads, int rounds, Durability durability,
      BenchEngine engine) {
    this.engine = engine;
    this.operations = operations;
    this.threads = threads;
    this.rounds = rounds;
    this.durability = durability;
  }

  List<Figure> run() throws Exception {
    System.out.printf("accept benchmark: %d operations per measurement, %d rounds, the five "
        + "measurements twice in each round in mirrored order, %s, durability %s, %d cores%n",
        operations, rounds, engine, durability, Runtime.getRuntime().availableProcessors());
    double[][] results = new double[Mode.values().length][rounds];
    double[] singleRatio = new double[rounds];
    double[] groupRatio = new double[rounds];
    for (int round = 0; round < rounds; round++) {
      // Each mode runs twice, in mirrored order (A B C D E E D C B A): a rate that drifts
      // through the round (the JIT warming up, the machine's other load) weighs on both sides
      // of every ratio alike, instead of on whichever mode happens to run later.
      Mode[] modes = Mode.values();
      double[][] pair = new double[modes.length][2];
      for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < modes.length; k++) {
          Mode mode = modes[pass == 0 ? k : modes.length - 1 - k];
          pair[mode.ordinal()][pass] = measure(mode.threads(threads), mode);
        }
      }
      for (Mode mode : modes) {
        results[mode.ordinal()][round] = harmonicMean(pair[mode.ordinal()]);
      }
      double raw1 = results[Mode.RAW.ordinal()][round];
      singleRatio[round] = results[Mode.ACCEPT.ordinal()][round] / raw1;
      groupRatio[round] = results[Mode.ACCEPT_THREADS.ordinal()][round] / raw1;
      double[] raw = pair[Mode.RAW.ordinal()];
      double[] accept = pair[Mode.ACCEPT.ordinal()];
      System.out.printf("  round %d: raw %.0f/s (%.0f, %.0f), accept %.0f/s (%.0f, %.0f), ratio "
          + "%.2f (accept after raw %.2f, before it %.2f), %d-thread accept %.0f/s (%.2f)%n",
          round + 1, raw1, raw[0], raw[1], results[Mode.ACCEPT.ordinal()][round], accept[0],
          accept[1], singleRatio[round], accept[0] / raw[0], accept[1] / raw[1], threads,
          results[Mode.ACCEPT_THREADS.ordinal()][round], groupRatio[round]);
    }
    double raw1 = BenchSupport.median(results[Mode.RAW.ordinal()]);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("raw JDBC insert+commit, 1 thread   : %8.0f rows/s (baseline)%n", raw1);
    System.out.printf("raw JDBC insert+commit, %d threads  : %8.0f rows/s%n", threads,
        BenchSupport.median(results[Mode.RAW_THREADS.ordinal()]));
    double ceiling = BenchSupport.median(results[Mode.RAW_GROUPS.ordinal()]);
    System.out.printf("raw JDBC %d rows per commit, 1 thread: %8.0f rows/s (%.2f x baseline: "
        + "what a perfect group commit of %d could reach)%n", threads, ceiling, ceiling / raw1,
        threads);
    System.out.printf("Outbox.accept, 1 thread            : %8.0f accepts/s, ratio %.2f "
        + "(target >= 0.90)%n", BenchSupport.median(results[Mode.ACCEPT.ordinal()]),
        BenchSupport.median(singleRatio));
    System.out.printf("Outbox.accept, %d threads           : %8.0f accepts/s, ratio %.2f "
        + "(target >= 4.00 x raw 1 thread)%n", threads,
        BenchSupport.median(results[Mode.ACCEPT_THREADS.ordinal()]),
        BenchSupport.median(groupRatio));
    String on = engine == BenchEngine.H2 ? "" : " (" + engine + ")";
    return List.of(
        Figure.atLeast("single-thread accept" + on, "raw insert+commit, 1 thread", singleRatio,
            0.9),
        Figure.atLeast(threads + " accepting threads" + on, "raw loop committing " + threads
            + " rows per commit", Figure.ratios(results[Mode.ACCEPT_THREADS.ordinal()],
            results[Mode.RAW_GROUPS.ordinal()]), 0.8));
  }


  /** The rate of running both measurements' operations back to back. */
  private static double harmonicMean(double[] pair) {
    return 2 / (1 / pair[0] + 1 / pair[1]);
  }

  private enum Mode {
    RAW, ACCEPT, RAW_THREADS, ACCEPT_THREADS, RAW_GROUPS;

    int threads(int many) {
      return this == RAW_THREADS || this == ACCEPT_THREADS ? many : 1;
    }
  }

  private double measure(int threadCount, Mode mode) throws Exception {
    Path dir = Files.createTempDirectory("accept-bench");
    try (JdbcDatabase db = engine.open(dir.resolve("bench"), threadCount + 2, durability)) {
      JdbcOutboxStore store = JdbcOutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      Connection[] raw = new Connection[threadCount];
      for (int t = 0; t < threadCount; t++) {
        raw[t] = db.dataSource().getConnection();
        raw[t].setAutoCommit(false);
      }
      try {
        Worker worker = switch (mode) {
          case ACCEPT, ACCEPT_THREADS -> (thread, n) -> outbox.accept(
              OutboxCommand.of("note.put", "note-" + (n % 100), payload(n)));
          case RAW, RAW_THREADS -> (thread, n) -> rawInsert(db, raw[thread], n, true);
          case RAW_GROUPS -> (thread, n) -> rawInsert(db, raw[thread], n, n % threads == 0);
        };
        runWith(threadCount, worker, Math.min(500, operations / 4)); // warm-up
        long start = System.nanoTime();
        runWith(threadCount, worker, operations);
        double seconds = (System.nanoTime() - start) / 1e9;
        return operations / seconds;
      } finally {
        for (Connection c : raw) {
          c.close();
        }
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  @FunctionalInterface
  private interface Worker {
    void accept(int thread, int n) throws Exception;
  }

  /** The same row shape accept writes, with the payload already canonical: pure JDBC cost. */
  private void rawInsert(JdbcDatabase db, Connection c, int n, boolean commit)
      throws SQLException {
    rawRow.insert(db, c, "note-" + (n % 100), ("{\"body\":\"" + "lorem ipsum ".repeat(8)
        + "\",\"n\":" + n + ",\"title\":\"note " + n + "\"}").getBytes(StandardCharsets.UTF_8));
    if (!commit) {
      return;
    }
    c.commit();
    if (durability == Durability.POWER_LOSS_SAFE && engine == BenchEngine.H2) {
      try (Statement s = c.createStatement()) {
        s.execute("CHECKPOINT SYNC");
      }
    }
  }

  private static Map<String, Object> payload(int n) {
    return Map.of("title", "note " + n, "body", "lorem ipsum ".repeat(8), "n", n);
  }

  private void runWith(int threadCount, Worker worker, int count) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threadCount);
    try {
      AtomicInteger remaining = new AtomicInteger(count);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threadCount; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          while (remaining.getAndDecrement() > 0) {
            worker.accept(thread, counter.incrementAndGet());
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

}
