package dev.outboxreplay.benchmarks;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Months of use, in minutes: commands accepted one by one and acked through the store's own claim
 * and complete (no HTTP) for {@code seconds} of real time, {@code pauseMillis} apart, on a clock
 * that moves {@code secondsPerCommand} per command, with the history retention applied every
 * simulated hour as a replayer does. Prints the file size and the live data (bytes of the rows
 * still kept) every 10 s, and their ratio.
 *
 * <p>Real time matters: H2 reuses the space of a dead chunk only after its retention time
 * ({@code RETENTION_TIME}, 45 s by default) of real time. {@code -Dfilesize.retentionTime=MS}
 * sets another value for the run, to measure the trade-off; the library does not change it.
 *
 * <p>"Live data" is measured, not estimated: once the database is closed, a copy of its file is
 * opened with plain H2 and rewritten by {@code SHUTDOWN COMPACT}, which keeps every row and index
 * entry and drops every dead page. The file at the end of the idle time is divided by that copy.
 * The estimate the probe prints while it runs (the bytes of the kept rows' payloads and responses
 * plus a fixed size per row and audit entry) leaves out the indexes, so it is printed for
 * comparison only.
 *
 * <p>It runs twice in one command: first with the library's compaction of the open file off (the
 * baseline), then on ({@code -Dfilesize.compactionInterval=MS} sets its interval, default
 * {@link H2Database#DEFAULT_COMPACTION_INTERVAL});
 * {@code -Dfilesize.compactionOnly=true} skips the first run and prints only the file against its
 * compacted copy. Every report line also shows H2's own fill rates: of the file, of all chunks,
 * and of the chunks old enough to be rewritten.
 * Besides the file size it times every accept: the p99 and the longest with compaction on,
 * against the same run's figures with it off.
 */
final class FileSizeProbe {
  private final int seconds;
  private final int pauseMillis;
  private final int secondsPerCommand;
  private final boolean retention;
  /** Seconds the database stays open and idle after the load. */
  private final int idleSeconds = Integer.getInteger("filesize.idleSeconds", 150);

  FileSizeProbe(int seconds, int pauseMillis, int secondsPerCommand, boolean retention) {
    this.seconds = seconds;
    this.pauseMillis = pauseMillis;
    this.secondsPerCommand = secondsPerCommand;
    this.retention = retention;
  }

  /** What one run measured. */
  private record Result(double fileToLive, long fileBytes, double idleFileToLive, long idleBytes,
      long compactedBytes, long[] acceptNanos, int cycles) {
    /** The file at the end of the idle time over the same rows in a fully compacted file. */
    double idleFileToCompacted() {
      return idleBytes / (double) compactedBytes;
    }

    double percentileMillis(double p) {
      return BenchSupport.percentileMillis(acceptNanos, p);
    }
  }

  private static final String COMPACTED_COPY =
      "live data: the same file copied after close and rewritten by H2's SHUTDOWN COMPACT";

  List<Figure> run() throws Exception {
    Duration interval = Duration.ofMillis(Long.getLong("filesize.compactionInterval",
        H2Database.DEFAULT_COMPACTION_INTERVAL.toMillis()));
    if (Boolean.getBoolean("filesize.compactionOnly")) {
      Result on = runOnce(true, interval);
      return List.of(target(on, interval));
    }
    Result off = runOnce(false, interval);
    Result on = runOnce(true, interval);
    System.out.printf("accept: p50 %.2f / %.2f ms, p99 %.2f / %.2f ms, longest %.2f / %.2f ms "
        + "(compaction off / on)%n", off.percentileMillis(0.5), on.percentileMillis(0.5),
        off.percentileMillis(0.99), on.percentileMillis(0.99), off.percentileMillis(1.0),
        on.percentileMillis(1.0));
    return List.of(
        Figure.reported(String.format("file size / live data after %d s of load, compaction "
            + "off (%,d cycles)", seconds, off.cycles()), "live data (rows kept, estimated)",
            new double[] {off.fileToLive()}),
        Figure.reported(String.format("file size / live data after %d s of load, compaction "
            + "every %d s (%,d cycles)", seconds, interval.toSeconds(), on.cycles()),
            "live data (rows kept, estimated)", new double[] {on.fileToLive()}),
        Figure.reported(String.format("file size / live data after %d s more idle, compaction "
            + "off", idleSeconds), "live data (rows kept, estimated)",
            new double[] {off.idleFileToLive()}),
        Figure.reported(String.format("file size / live data after %d s more idle, compaction "
            + "every %d s", idleSeconds, interval.toSeconds()), "live data (rows kept, "
            + "estimated)", new double[] {on.idleFileToLive()}),
        Figure.reported(String.format("file size / live data after %d s more idle, compaction "
            + "off", idleSeconds), COMPACTED_COPY, new double[] {off.idleFileToCompacted()}),
        target(on, interval),
        Figure.atMost("file size after the idle time, compaction on / off", "file size with "
            + "compaction off, same run", new double[] {on.idleBytes() / (double) off.idleBytes()},
            0.1),
        Figure.atMost("accept p99 with compaction on / off", "accept p99, compaction off, same "
            + "run", new double[] {on.percentileMillis(0.99) / off.percentileMillis(0.99)}, 3));
  }

  /** The target figure: the file after the idle time over its compacted copy, at most 2. */
  private Figure target(Result on, Duration interval) {
    return Figure.atMost(String.format("file size / live data after %d s more idle, compaction "
        + "every %d s", idleSeconds, interval.toSeconds()), COMPACTED_COPY,
        new double[] {on.idleFileToCompacted()}, 2);
  }

  private Result runOnce(boolean compaction, Duration interval) throws Exception {
    Path dir = Files.createTempDirectory("outbox-filesize");
    Path file = dir.resolve("outbox");
    ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    String retentionTime = System.getProperty("filesize.retentionTime");
    System.out.printf("file-size probe: %d s of real time, %d ms between accept-ack cycles, "
        + "%d simulated s per command, history retention %s, H2 RETENTION_TIME %s, "
        + "compaction %s%n", seconds, pauseMillis, secondsPerCommand,
        retention ? "on (tombstone after 1 day, delete after 8 days)" : "off",
        retentionTime == null ? "default (45 s)" : retentionTime + " ms",
        compaction ? "every " + interval.toMillis() + " ms" : "off");
    double ratio = Double.NaN;
    int cycles = 0;
    long fileBytes;
    double idleRatio = Double.NaN;
    long idleBytes;
    long[] acceptNanos = new long[1 << 16];
    try (H2Database db = H2Database.builder().file(file).compaction(compaction)
        .compactionInterval(interval).build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      if (retentionTime != null) {
        try (Connection c = db.dataSource().getConnection()) {
          c.createStatement().execute("SET RETENTION_TIME " + Integer.parseInt(retentionTime));
        }
      }
      AckCycles ackCycles = new AckCycles(store, clock, Duration.ofSeconds(secondsPerCommand),
          retention);
      long started = System.nanoTime();
      long end = started + seconds * 1_000_000_000L;
      long nextReport = started + 10_000_000_000L;
      for (int i = 1; System.nanoTime() < end; i++) {
        cycles = i;
        if (i > acceptNanos.length) {
          acceptNanos = java.util.Arrays.copyOf(acceptNanos, acceptNanos.length * 2);
        }
        acceptNanos[i - 1] = ackCycles.run(i);
        if (System.nanoTime() >= nextReport) {
          nextReport += 10_000_000_000L;
          ratio = report(db, file, i, started);
        }
        if (pauseMillis > 0) {
          Thread.sleep(pauseMillis);
        }
      }
      fileBytes = Files.size(BenchEngine.H2.dataFile(file));
      // then idle, as an app between bursts: space freed longer than H2's retention time ago
      // can be given back only now
      long idleEnd = System.nanoTime() + idleSeconds * 1_000_000_000L;
      System.out.printf("idle for %d s, the database open%n", idleSeconds);
      while (System.nanoTime() < idleEnd) {
        Thread.sleep(Math.min(15_000, Math.max(1, (idleEnd - System.nanoTime()) / 1_000_000)));
        idleRatio = report(db, file, cycles, started);
      }
      idleBytes = Files.size(BenchEngine.H2.dataFile(file));
    }
    System.out.printf("closed: file %,d bytes%n", Files.size(BenchEngine.H2.dataFile(file)));
    long compacted = compactedCopy(dir, file);
    System.out.printf("the same rows in a fully compacted copy: %,d bytes; the file after the "
        + "idle time was %.2f times that%n", compacted, idleBytes / (double) compacted);
    BenchSupport.deleteTree(dir);
    return new Result(ratio, fileBytes, idleRatio, idleBytes, compacted,
        java.util.Arrays.copyOf(acceptNanos, cycles), cycles);
  }

  /**
   * Copies the closed file and rewrites the copy with H2's {@code SHUTDOWN COMPACT}: every row
   * and index entry, no dead page. Its size is the live data as H2 stores it.
   */
  private static long compactedCopy(Path dir, Path file) throws Exception {
    Path copy = dir.resolve("compacted");
    Files.copy(BenchEngine.H2.dataFile(file), BenchEngine.H2.dataFile(copy));
    BenchEngine.H2.compactToLiveData(copy);
    return Files.size(BenchEngine.H2.dataFile(copy));
  }

  private static double report(H2Database db, Path file, int done, long started)
      throws Exception {
    long live;
    long rows;
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*), SUM(OCTET_LENGTH("
            + "payload) + COALESCE(OCTET_LENGTH(response_body), 0) + 32 + 200) "
            + "FROM outbox_command")) {
      rs.next();
      rows = rs.getLong(1);
      live = rs.getLong(2);
    }
    long audit;
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM outbox_audit")) {
      rs.next();
      audit = rs.getLong(1) * 100;
    }
    Map<String, String> info = new java.util.HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery("SELECT SETTING_NAME, SETTING_VALUE "
            + "FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME LIKE 'info.%FILL_RATE%'")) {
      while (rs.next()) {
        info.put(rs.getString(1), rs.getString(2));
      }
    }
    long size = Files.size(BenchEngine.H2.dataFile(file));
    System.out.printf("%,9d cycles  %5.0f s  file %,13d bytes  rows %,8d  live ~%,11d bytes  "
        + "file/live %6.1f  H2 fill: file %s%%, chunks %s%%, rewritable chunks %s%%%n", done,
        (System.nanoTime() - started) / 1e9, size, rows, live + audit,
        size / (double) Math.max(1, live + audit), info.get("info.FILL_RATE"),
        info.get("info.CHUNKS_FILL_RATE"), info.get("info.CHUNKS_FILL_RATE_RW"));
    return size / (double) Math.max(1, live + audit);
  }
}
