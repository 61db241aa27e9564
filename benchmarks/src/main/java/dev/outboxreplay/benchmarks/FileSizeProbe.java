package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
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
 */
final class FileSizeProbe {
  private final int seconds;
  private final int pauseMillis;
  private final int secondsPerCommand;
  private final boolean retention;

  FileSizeProbe(int seconds, int pauseMillis, int secondsPerCommand, boolean retention) {
    this.seconds = seconds;
    this.pauseMillis = pauseMillis;
    this.secondsPerCommand = secondsPerCommand;
    this.retention = retention;
  }

  List<Figure> run() throws Exception {
    Path dir = Files.createTempDirectory("outbox-filesize");
    Path file = dir.resolve("outbox");
    Instant[] now = {Instant.parse("2026-01-01T00:00:00Z")};
    Clock clock = new Clock() {
      @Override
      public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return now[0];
      }
    };
    byte[] response = "{\"applied\":true,\"version\":17}".getBytes(StandardCharsets.UTF_8);
    String retentionTime = System.getProperty("filesize.retentionTime");
    System.out.printf("file-size probe: %d s of real time, %d ms between accept-ack cycles, "
        + "%d simulated s per command, history retention %s, H2 RETENTION_TIME %s%n", seconds,
        pauseMillis, secondsPerCommand,
        retention ? "on (tombstone after 1 day, delete after 8 days)" : "off",
        retentionTime == null ? "default (45 s)" : retentionTime + " ms");
    double ratio = Double.NaN;
    int cycles = 0;
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      if (retentionTime != null) {
        try (Connection c = db.dataSource().getConnection()) {
          c.createStatement().execute("SET RETENTION_TIME " + Integer.parseInt(retentionTime));
        }
      }
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      Instant lastUpkeep = now[0];
      long started = System.nanoTime();
      long end = started + seconds * 1_000_000_000L;
      long nextReport = started + 10_000_000_000L;
      for (int i = 1; System.nanoTime() < end; i++) {
        cycles = i;
        outbox.accept(OutboxCommand.of("note.put", "note-" + (i % 500), Map.of("id",
            "note-" + (i % 500), "body", "a note of about a hundred bytes, edited offline, "
                + "version " + i)));
        List<OutboxRecord> held = store.claim("probe", Duration.ofMinutes(1), 8, now[0]);
        for (OutboxRecord r : held) {
          OutboxRecord sending = store.markSending(r.commandId(), r.fencingToken(),
              now[0].plusSeconds(60), now[0]);
          store.complete(sending.commandId(), sending.fencingToken(), Status.SENDING,
              Outcome.acked(new StoredResponse(201, response)), now[0]);
        }
        now[0] = now[0].plusSeconds(secondsPerCommand);
        if (retention && Duration.between(lastUpkeep, now[0]).toHours() >= 1) {
          lastUpkeep = now[0];
          store.pruneAudit(now[0].minus(Duration.ofDays(30)));
          store.tombstoneEnded(now[0].minus(Duration.ofDays(1)), now[0]);
          store.deleteTombstones(now[0].minus(Duration.ofDays(8)));
        }
        if (System.nanoTime() >= nextReport) {
          nextReport += 10_000_000_000L;
          ratio = report(db, file, i, started);
        }
        if (pauseMillis > 0) {
          Thread.sleep(pauseMillis);
        }
      }
    }
    System.out.printf("closed: file %,d bytes%n", Files.size(Path.of(file + ".mv.db")));
    BenchSupport.deleteTree(dir);
    return List.of(Figure.below(String.format("file size / live data after %d s (%,d cycles)",
        seconds, cycles), "live data (rows kept, estimated)", new double[] {ratio}, 2));
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
    long size = Files.size(Path.of(file + ".mv.db"));
    System.out.printf("%,9d cycles  %5.0f s  file %,13d bytes  rows %,8d  live ~%,11d bytes  "
        + "file/live %6.1f%n", done, (System.nanoTime() - started) / 1e9, size, rows,
        live + audit, size / (double) Math.max(1, live + audit));
    return size / (double) Math.max(1, live + audit);
  }
}
