package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import okhttp3.HttpUrl;

/**
 * The same library work on SQLite and on H2, alternating in each round of one run: single-thread
 * and multi-thread {@code Outbox.accept}, the process CPU per accept, the replay of the accepted
 * commands to a trivial loopback receiver (every state a command passes through written by the
 * library, as in production), and the file bytes per command after it. Both engines with their
 * defaults ({@link dev.outboxreplay.jdbc.Durability#PROCESS_CRASH_SAFE}). SQLite's figures are
 * printed as ratios to H2's of the same round.
 */
final class EngineBenchmark {
  private final int commands;
  private final int threads;
  private final int rounds;
  private final AtomicInteger counter = new AtomicInteger();

  EngineBenchmark(int commands, int threads, int rounds) {
    this.commands = commands;
    this.threads = threads;
    this.rounds = rounds;
  }

  /** One engine's figures in one round. */
  private record Round(double accepts, double cpuMicrosPerAccept, double threadAccepts,
      double replayed, double cpuMicrosPerReplayed, double bytesPerCommand) {}

  List<Figure> run() throws Exception {
    System.out.printf("engine benchmark: %d commands per measurement, %d accepting threads, "
        + "%d rounds, SQLite and H2 alternating, trivial loopback receiver, %d cores%n",
        commands, threads, rounds, Runtime.getRuntime().availableProcessors());
    Round[][] results = new Round[BenchEngine.values().length][rounds];
    try (TrivialReceiver receiver = TrivialReceiver.start(16)) {
      // a round on each engine first, not counted: the shared code is compiled for both alike
      for (BenchEngine engine : BenchEngine.values()) {
        measure(engine, receiver.baseUrl());
      }
      for (int round = 0; round < rounds; round++) {
        for (BenchEngine engine : round % 2 == 0 ? List.of(BenchEngine.H2, BenchEngine.SQLITE)
            : List.of(BenchEngine.SQLITE, BenchEngine.H2)) {
          Round r = measure(engine, receiver.baseUrl());
          results[engine.ordinal()][round] = r;
          System.out.printf("  round %d %-6s: accept %6.0f/s (%4.0f us CPU), %d threads %6.0f/s,"
              + " replay %6.0f/s (%4.0f us CPU), %7.0f file bytes per command%n", round + 1,
              engine, r.accepts(), r.cpuMicrosPerAccept(), threads, r.threadAccepts(),
              r.replayed(), r.cpuMicrosPerReplayed(), r.bytesPerCommand());
        }
      }
    }
    Round[] h2 = results[BenchEngine.H2.ordinal()];
    Round[] lite = results[BenchEngine.SQLITE.ordinal()];
    List<Figure> figures = new ArrayList<>();
    figures.add(Figure.reported("SQLite single-thread accepts/s", "H2, same round",
        ratios(lite, h2, Round::accepts)));
    figures.add(Figure.reported("SQLite process CPU per accept", "H2, same round",
        ratios(lite, h2, Round::cpuMicrosPerAccept)));
    figures.add(Figure.reported("SQLite " + threads + "-thread accepts/s", "H2, same round",
        ratios(lite, h2, Round::threadAccepts)));
    figures.add(Figure.reported("SQLite replayed commands/s (trivial receiver)",
        "H2, same round", ratios(lite, h2, Round::replayed)));
    figures.add(Figure.reported("SQLite process CPU per replayed command", "H2, same round",
        ratios(lite, h2, Round::cpuMicrosPerReplayed)));
    figures.add(Figure.reported("SQLite file bytes per command", "H2, same round",
        ratios(lite, h2, Round::bytesPerCommand)));
    return figures;
  }

  private static double[] ratios(Round[] a, Round[] b,
      java.util.function.ToDoubleFunction<Round> figure) {
    double[] r = new double[a.length];
    for (int i = 0; i < a.length; i++) {
      r[i] = figure.applyAsDouble(a[i]) / figure.applyAsDouble(b[i]);
    }
    return r;
  }

  private Round measure(BenchEngine engine, String receiverUrl) throws Exception {
    Path dir = Files.createTempDirectory("engine-bench");
    try {
      try (JdbcDatabase db = engine.open(dir.resolve("app"), threads + 4,
          Durability.PROCESS_CRASH_SAFE)) {
        JdbcOutboxStore store = JdbcOutboxStore.create(db);
        Outbox<Connection> outbox = Outbox.builder(store).build();
        runWith(1, outbox, Math.min(500, commands / 4)); // warm-up
        long cpu0 = BenchSupport.processCpuNanos();
        long t0 = System.nanoTime();
        runWith(1, outbox, commands);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpuPerAccept = (BenchSupport.processCpuNanos() - cpu0) / 1e3 / commands;
        long t1 = System.nanoTime();
        runWith(threads, outbox, commands);
        double threadSeconds = (System.nanoTime() - t1) / 1e9;
        long total = store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
        OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(receiverUrl))
            .client(BenchSupport.client(8)).build();
        long cpu2 = BenchSupport.processCpuNanos();
        long t2 = System.nanoTime();
        try (Replayer<Connection> replayer = Replayer.builder(store, transport)
            .concurrency(8).batchSize(100).build()) {
          replayer.start();
          if (!replayer.awaitDrained(Duration.ofMinutes(10))) {
            throw new IllegalStateException("replay stalled: " + store.countByStatus());
          }
        }
        double replaySeconds = (System.nanoTime() - t2) / 1e9;
        double cpuPerReplayed = (BenchSupport.processCpuNanos() - cpu2) / 1e3 / total;
        long acked = store.countByStatus().get(Status.ACKED);
        if (acked != total) {
          throw new IllegalStateException(engine + ": " + acked + " of " + total + " acked");
        }
        db.close(); // the file's size once closed, as users see it (idempotent)
        return new Round(commands / seconds, cpuPerAccept, commands / threadSeconds,
            total / replaySeconds, cpuPerReplayed, (double) bytes(dir) / total);
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  /** Every file the engine left in {@code dir} (H2's {@code .mv.db}; SQLite's file and WAL). */
  private static long bytes(Path dir) throws java.io.IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.mapToLong(f -> f.toFile().length()).sum();
    }
  }

  private void runWith(int threadCount, Outbox<Connection> outbox, int count) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threadCount);
    try {
      AtomicInteger remaining = new AtomicInteger(count);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threadCount; t++) {
        futures.add(pool.submit(() -> {
          while (remaining.getAndDecrement() > 0) {
            int n = counter.incrementAndGet();
            outbox.accept(OutboxCommand.of("note.put", "note-" + (n % 100),
                Map.of("title", "note " + n, "body", "lorem ipsum ".repeat(8), "n", n)));
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
