package dev.outboxreplay.benchmarks;

import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.internal.SqliteFile;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A SQLite outbox file after {@code cycles} accept-ack cycles with the history retention a
 * replayer applies, against the same rows in a rewritten copy ({@code VACUUM}: every row and
 * index entry, no free page), in one run. Each cycle accepts a command and takes it through the
 * store's own claim, mark-sending and complete (no HTTP) on a clock that moves {@code
 * secondsPerCommand} per command; every simulated hour the audit older than 30 days is pruned,
 * commands ended a day ago become tombstones and tombstones older than 8 days are deleted, which
 * gives the freed pages back ({@code PRAGMA incremental_vacuum}). Unlike H2's (the {@code
 * filesize} probe), SQLite's reuse of freed space does not wait on real time, so the cycles run
 * back to back.
 */
final class SqliteFileSizeProbe {
  private final int cycles;
  private final int secondsPerCommand;

  SqliteFileSizeProbe(int cycles, int secondsPerCommand) {
    this.cycles = cycles;
    this.secondsPerCommand = secondsPerCommand;
  }

  List<Figure> run() throws Exception {
    Path dir = Files.createTempDirectory("outbox-filesize-sqlite");
    try {
      Path base = dir.resolve("outbox");
      ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
      System.out.printf("SQLite file-size probe: %,d accept-ack cycles, %d simulated s per "
          + "command, history retention on (audit 30 days, tombstone after 1 day, delete after 8 "
          + "days)%n", cycles, secondsPerCommand);
      long started = System.nanoTime();
      long peak = 0;
      Path file;
      try (SqliteDatabase db = SqliteDatabase.open(base)) {
        file = db.file();
        JdbcOutboxStore store = JdbcOutboxStore.create(db);
        AckCycles ackCycles = new AckCycles(store, clock, Duration.ofSeconds(secondsPerCommand),
            true);
        for (int i = 1; i <= cycles; i++) {
          ackCycles.run(i);
          if (i % 100_000 == 0 || i == cycles) {
            long size = SqliteFile.sizeWithLog(file);
            peak = Math.max(peak, size);
            System.out.printf("%,9d cycles  %5.0f s  file and log %,13d bytes%n", i,
                (System.nanoTime() - started) / 1e9, size);
          }
        }
      }
      long closed = Files.size(file);
      Path copy = dir.resolve("vacuumed.sqlite");
      Files.copy(file, copy);
      try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + copy);
          java.sql.Statement s = c.createStatement()) {
        s.execute("VACUUM");
      }
      long live = Files.size(copy);
      double ratio = closed / (double) live;
      System.out.printf("closed: file %,d bytes; the same rows vacuumed: %,d bytes; ratio %.2f; "
          + "largest file and log while running %,d bytes%n", closed, live, ratio, peak);
      return List.of(Figure.atMost(String.format("SQLite file / live data after %,d accept-ack "
          + "cycles with retention", cycles), String.format("the same rows vacuumed: %.1f MB",
          live / 1e6), new double[] {ratio}, 1.5));
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }
}
