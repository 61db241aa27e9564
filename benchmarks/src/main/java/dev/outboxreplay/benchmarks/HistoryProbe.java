package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;

/**
 * What a year of history costs the calls that {@code outbox status} and the metrics gauges make,
 * and the lease recovery at the start of every pass. Builds a file with {@code rows} commands,
 * all acked but {@code open} queued ones (one per entity, all due) and a few rejected, with one
 * plain SQL insert; then times, over {@code rounds}, the store's calls against the plain
 * full-scan count in the same run (the baseline: what {@code countByStatus} did before).
 */
final class HistoryProbe {
  private final int rows;
  private final int open;
  private final int rounds;

  HistoryProbe(int rows, int open, int rounds) {
    this.rows = rows;
    this.open = open;
    this.rounds = rounds;
  }

  void run() throws Exception {
    // -Dhistory.keep=DIR keeps the file there (DIR/outbox), for timing `outbox status` on it
    String keep = System.getProperty("history.keep");
    Path dir = keep == null ? Files.createTempDirectory("outbox-history")
        : Files.createDirectories(Path.of(keep));
    try (H2Database db = H2Database.open(dir.resolve("outbox"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      long fill = System.nanoTime();
      fill(db);
      System.out.printf("filled %,d rows (%,d open) in %.1f s%n", rows, open,
          (System.nanoTime() - fill) / 1e9);
      Map<Status, Long> counts = store.countByStatus();
      System.out.println("counts " + counts);

      double[] status = new double[rounds];
      double[] scan = new double[rounds];
      double[] recovery = new double[rounds];
      double[] oldRecovery = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        touch(db); // H2 reuses a query's result while its table is unchanged: change it
        long t0 = System.nanoTime();
        store.countByStatus();
        store.countByErrorCode(Status.REJECTED);
        store.oldestOpenAcceptedAt();
        status[r] = (System.nanoTime() - t0) / 1e6;
        touch(db);
        t0 = System.nanoTime();
        fullScanCount(db);
        scan[r] = (System.nanoTime() - t0) / 1e6;
        touch(db);
        t0 = System.nanoTime();
        store.recoverExpiredLeases(Instant.now());
        recovery[r] = (System.nanoTime() - t0) / 1e6;
        touch(db);
        t0 = System.nanoTime();
        claimRangeRecoveryRead(db);
        oldRecovery[r] = (System.nanoTime() - t0) / 1e6;
      }
      row("status calls (counts, rejected codes, oldest open), ms", status, 100);
      row("baseline: GROUP BY status full scan, ms", scan, Double.NaN);
      row("lease recovery with nothing held, ms", recovery, Double.NaN);
      row("baseline: its read through the claim index's due range, ms", oldRecovery, Double.NaN);
      System.out.printf("ratio status calls / full-scan baseline (median): %.3f%n",
          BenchSupport.median(status) / BenchSupport.median(scan));
    } finally {
      if (keep == null) {
        BenchSupport.deleteTree(dir);
      }
    }
  }

  private static void row(String figure, double[] values, double target) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    System.out.printf("%-58s min %8.1f  median %8.1f  max %8.1f%s%n", figure, sorted[0],
        BenchSupport.median(values), sorted[sorted.length - 1],
        Double.isNaN(target) ? "" : String.format("  target < %.0f: %s", target,
            BenchSupport.median(values) < target ? "met" : "NOT met"));
  }

  private void fill(H2Database db) throws Exception {
    long now = System.currentTimeMillis();
    try (Connection c = db.dataSource().getConnection()) {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_command (command_id, "
          + "idempotency_key, operation, entity_key, payload, payload_hash, status, attempt, "
          + "next_attempt_at, fencing_token, session_version, last_error_code, created_at, "
          + "updated_at, schema_version, entity_head) "
          + "SELECT RANDOM_UUID(), 'key-' || X, 'note.put', 'entity-' || X, X'7b7d', "
          + "HASH('SHA-256', X'7b7d'), CASE WHEN X > ? THEN 'queued' "
          + "WHEN MOD(X, 1000) = 0 THEN 'rejected' ELSE 'acked' END, 1, ?, 1, 0, "
          + "CASE WHEN X <= ? AND MOD(X, 1000) = 0 THEN 'http_422' END, ? + X, ? + X, 1, "
          + "X > ? FROM SYSTEM_RANGE(?, ?)")) {
        int batch = 100_000;
        for (long from = 1; from <= rows; from += batch) {
          long to = Math.min(rows, from + batch - 1);
          long closed = rows - open;
          ps.setLong(1, closed);
          ps.setLong(2, now);
          ps.setLong(3, closed);
          ps.setLong(4, now - rows);
          ps.setLong(5, now - rows);
          ps.setLong(6, closed);
          ps.setLong(7, from);
          ps.setLong(8, to);
          ps.executeUpdate();
        }
      }
    }
  }

  /** Changes one row's {@code updated_at} (not indexed), so no cached query result is reused. */
  private static void touch(H2Database db) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.executeUpdate("UPDATE outbox_command SET updated_at = updated_at + 1 WHERE seq = 1");
    }
  }

  /** The rows the recovery read before idx_outbox_status: the claim index's whole due range. */
  private static long claimRangeRecoveryRead(H2Database db) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM outbox_command "
            + "USE INDEX (idx_outbox_claim) WHERE claim_due <= ? AND status = 'sending'")) {
      ps.setLong(1, System.currentTimeMillis());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static long fullScanCount(H2Database db) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT status, COUNT(*) FROM outbox_command GROUP BY status")) {
      long n = 0;
      while (rs.next()) {
        n += rs.getLong(2);
      }
      return n;
    }
  }
}
