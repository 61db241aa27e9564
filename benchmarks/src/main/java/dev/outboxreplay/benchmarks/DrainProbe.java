package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.testkit.AckingTransport;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;

/**
 * A backlog drained in bounded memory: {@code commands} commands accepted in batches of 1,000
 * (as days offline leave them), then drained by a default {@code Replayer} through a transport
 * that acknowledges at once (no HTTP, so only the client's memory is measured), then the
 * database closed. Run it with a small heap, for example {@code java -Xmx64m -jar
 * benchmarks.jar drain 1000000}. Prints the time of each phase, the heap pools' peak
 * occupancy, the share of time spent in GC, and the file size; "finished" means the close
 * returned too. {@code -Ddrain.retentionTime=MS} sets H2's {@code RETENTION_TIME} for the run
 * (the probe only; the library keeps H2's 45 s).
 */
final class DrainProbe {
  private final int commands;
  private final BenchEngine engine;

  DrainProbe(int commands, BenchEngine engine) {
    this.commands = commands;
    this.engine = engine;
  }

  List<Figure> run() throws Exception {
    Path dir = Files.createTempDirectory("outbox-drain");
    long maxHeap = Runtime.getRuntime().maxMemory();
    System.out.printf("drain probe: %,d commands, %s file, max heap %,d MB%n", commands,
        engine, maxHeap >> 20);
    long started = System.nanoTime();
    long acceptedAt;
    long drainedAt;
    long fileBytes;
    try (JdbcDatabase db = engine.open(dir.resolve("outbox"), H2Database.DEFAULT_MAX_POOL_SIZE,
        Durability.PROCESS_CRASH_SAFE)) {
      JdbcOutboxStore store = JdbcOutboxStore.create(db);
      String retentionTime = System.getProperty("drain.retentionTime");
      if (retentionTime != null && engine == BenchEngine.H2) {
        try (Connection c = db.dataSource().getConnection()) {
          c.createStatement().execute("SET RETENTION_TIME " + Integer.parseInt(retentionTime));
        }
        System.out.println("H2 RETENTION_TIME " + retentionTime + " ms");
      }
      Outbox<Connection> outbox = Outbox.builder(store).build();
      BenchSupport.acceptBacklog(outbox, commands, n -> OutboxCommand.ofJson("note.put",
          "note-" + (n % 5_000), "{\"body\":\"a note edited offline\",\"seq\":" + n + "}"),
          true);
      acceptedAt = System.nanoTime();
      try (Replayer<Connection> replayer =
          Replayer.builder(store, AckingTransport.acking()).build()) {
        replayer.start();
        while (!replayer.awaitDrained(Duration.ofSeconds(30))) {
          System.out.printf("  draining: %s after %.0f s, heap used %,d MB, file %,d MB%n",
              store.countByStatus(), (System.nanoTime() - started) / 1e9, usedHeapMb(),
              Files.size(db.file()) >> 20);
        }
      }
      drainedAt = System.nanoTime();
      long acked = store.countByStatus().getOrDefault(Status.ACKED, 0L);
      if (acked != commands) {
        throw new IllegalStateException("drained " + acked + " of " + commands);
      }
      fileBytes = Files.size(db.file());
    }
    long closedAt = System.nanoTime();
    long gcMillis = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      gcMillis += Math.max(0, gc.getCollectionTime());
    }
    double total = (closedAt - started) / 1e9;
    System.out.printf("finished: accept %.0f s, drain %.0f s, close %.1f s; heap pools' peaks "
        + "%,d MB (max heap %,d MB); GC %.0f%% of the time; file %,d MB before close%n",
        (acceptedAt - started) / 1e9, (drainedAt - acceptedAt) / 1e9, (closedAt - drainedAt) / 1e9,
        sumOfHeapPoolPeaksMb(), maxHeap >> 20, 100.0 * gcMillis / 1000 / total, fileBytes >> 20);
    BenchSupport.deleteTree(dir);
    return List.of(Figure.reported(String.format("drain of %,d queued commands (%s) with a %d MB "
        + "heap, close included: seconds", commands, engine, maxHeap >> 20), "finished",
        new double[] {total}),
        Figure.reported("share of that time in GC, %", "-",
            new double[] {100.0 * gcMillis / 1000 / total}));
  }

  private static long usedHeapMb() {
    Runtime r = Runtime.getRuntime();
    return (r.totalMemory() - r.freeMemory()) >> 20;
  }

  /** The sum of each heap pool's peak occupancy (an upper bound of the heap's peak). */
  private static long sumOfHeapPoolPeaksMb() {
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    return peak >> 20;
  }
}
