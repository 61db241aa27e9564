package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.Transport;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.testkit.AckingTransport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What a year of history costs the calls that {@code outbox status} and the metrics gauges make,
 * and the lease recovery at the start of every pass. Builds a file with {@code rows} commands,
 * all acked but {@code open} queued ones (one per entity, all due) and a few rejected, with one
 * plain SQL insert; then times, over {@code rounds}, the store's calls against the plain
 * full-scan count in the same run (the baseline: what {@code countByStatus} did before). Runs
 * on either engine.
 */
final class HistoryProbe {
  private final int rows;
  private final int open;
  private final int rounds;
  private final BenchEngine engine;
  /** Open-to-first-request pairs per round: each is short, so it takes more to see a median. */
  private static final int FIRST_REQUEST_PAIRS_PER_ROUND = 4;

  HistoryProbe(int rows, int open, int rounds) {
    this(rows, open, rounds, BenchEngine.H2);
  }

  HistoryProbe(int rows, int open, int rounds, BenchEngine engine) {
    this.rows = rows;
    this.open = open;
    this.rounds = rounds;
    this.engine = engine;
  }

  private static JdbcDatabase open(BenchEngine engine, Path file) {
    return engine.open(file, 8, Durability.PROCESS_CRASH_SAFE);
  }

  List<Figure> run() throws Exception {
    // -Dhistory.keep=DIR keeps the file there (DIR/outbox), for timing `outbox status` on it
    String keep = System.getProperty("history.keep");
    Path dir = keep == null ? Files.createTempDirectory("outbox-history")
        : Files.createDirectories(Path.of(keep));
    List<Figure> figures = new ArrayList<>();
    try {
      measureCalls(dir, figures);
      // after the file above was closed: a fresh JVM per start, as an app starts; then warm
      Path none = dir.resolve("no-history");
      try (JdbcDatabase db = open(engine, none)) {
        JdbcOutboxStore.create(db);
        fill(db, open, open);
      }
      Path big = dir.resolve("outbox");
      // As filled, the files hold mostly the dead pages of the fill's large transactions (about
      // 16 times the live data at 1,000,000 rows), far more than a file the compaction schedule
      // keeps (at most twice its live data: the filesize probe). The target is measured on the
      // files rewritten to their live data, as that probe's baseline is; the as-filled figure
      // shows what the dead pages themselves cost.
      String filled = sizes(big, none);
      figures.add(0, firstRequestInNewJvm(big, none, "files as filled (" + filled + ")", false));
      engine.compactToLiveData(big);
      engine.compactToLiveData(none);
      String compacted = sizes(big, none);
      figures.add(0, firstRequestInNewJvm(big, none, "files rewritten to their live data ("
          + compacted + ")", true));
      figures.add(2, firstRequest(big, none));
      return figures;
    } finally {
      if (keep == null) {
        BenchSupport.deleteTree(dir);
      }
    }
  }

  private void measureCalls(Path dir, List<Figure> figures) throws Exception {
    try (JdbcDatabase db = open(engine, dir.resolve("outbox"))) {
      JdbcOutboxStore store = JdbcOutboxStore.create(db);
      long fill = System.nanoTime();
      fill(db, rows, open);
      System.out.printf("%s: filled %,d rows (%,d open) in %.1f s%n", engine, rows, open,
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
      figures.addAll(List.of(
          Figure.below(String.format("status calls at %,d rows%s, ms", rows, engine.suffix()),
              String.format("GROUP BY full scan: %.1f ms", BenchSupport.median(scan)), status,
              100),
          Figure.reported(String.format("lease recovery beside %,d due rows%s, ms", open,
              engine.suffix()),
              String.format("claim-range read: %.1f ms", BenchSupport.median(oldRecovery)),
              recovery)));
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

  /** The SHA-256 of the payload {@code {}}, as the library stores it. */
  private static final String PAYLOAD_HASH =
      "X'44136FA355B3678A1146AD16F7E8649E94FB4FC21FE77E8310C060F61CAAFF8A'";

  private static final String COLUMNS = "INSERT INTO outbox_command (command_id, "
      + "idempotency_key, operation, entity_key, payload, payload_hash, status, attempt, "
      + "next_attempt_at, fencing_token, session_version, last_error_code, created_at, "
      + "updated_at, schema_version, entity_head) ";

  /**
   * Rows {@code X} from parameter 7 to parameter 8, in one statement of the engine's SQL; the
   * parameters are numbered ({@code ?N}, which both engines read), so the range may come first.
   */
  private static String fillStatement(BenchEngine engine) {
    String values = "'key-' || X, 'note.put', 'entity-' || X, X'7b7d', " + PAYLOAD_HASH + ", "
        + "CASE WHEN X > ?1 THEN 'queued' WHEN X % 1000 = 0 THEN 'rejected' ELSE 'acked' END, "
        + "1, ?2, 1, 0, CASE WHEN X <= ?3 AND X % 1000 = 0 THEN 'http_422' END, ?4 + X, ?5 + X, "
        + "1, X > ?6";
    if (engine == BenchEngine.H2) {
      return COLUMNS + "SELECT RANDOM_UUID(), " + values + " FROM SYSTEM_RANGE(?7, ?8)";
    }
    return "WITH RECURSIVE r(X) AS (SELECT ?7 UNION ALL SELECT X + 1 FROM r WHERE X < ?8) "
        + COLUMNS + "SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-' || "
        + "hex(randomblob(2)) || '-' || hex(randomblob(2)) || '-' || hex(randomblob(6))), "
        + values + " FROM r";
  }

  private void fill(JdbcDatabase db, long rows, long open) throws Exception {
    long now = System.currentTimeMillis();
    try (Connection c = db.dataSource().getConnection()) {
      try (PreparedStatement ps = c.prepareStatement(fillStatement(engine))) {
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

  /**
   * Open + {@code start()} until the first request leaves, on the big file and on a file with
   * the same open rows and no history; each pair reopens both (the history file is closed
   * first, so its H2 instance is gone). One pair warms the JVM up and is not counted; then
   * {@link #FIRST_REQUEST_PAIRS_PER_ROUND} pairs per round, the file measured first alternating
   * and a GC before each, since one measurement is tens of milliseconds and a collection or a
   * compilation inside it is most of its spread. Returns the ratio per pair.
   */
  private Figure firstRequest(Path big, Path none) throws Exception {
    double[][] pairs = alternatingPairs(rounds * FIRST_REQUEST_PAIRS_PER_ROUND,
        () -> millisToFirstRequest(big), () -> millisToFirstRequest(none));
    printPairs("open + start() to the first request", pairs);
    return Figure.reported(String.format("open + start() to first request in a warm JVM, %,d "
        + "rows of history%s", rows, engine.suffix()), String.format("the same with no history: %.1f ms",
        BenchSupport.median(pairs[1])), Figure.ratios(pairs[0], pairs[1]));
  }

  /**
   * An app's start: a new JVM that opens the file, starts a replayer and sends its first request
   * ({@link FirstRequestChild}), timed from starting the process to the child's report, on the
   * big file and on the one with no history, alternating which goes first; {@code rounds} times
   * two pairs after one pair not counted. Returns the ratio per pair.
   */
  private Figure firstRequestInNewJvm(Path big, Path none, String files, boolean target)
      throws Exception {
    double[][] pairs = alternatingPairs(rounds * 2, () -> FirstRequestChild.run(big, engine),
        () -> FirstRequestChild.run(none, engine));
    printPairs("new JVM: start to the first request, " + files, pairs);
    String name = String.format("app start (new JVM) to first request, %,d rows of history%s, %s",
        rows, engine.suffix(), files);
    String baseline = String.format("the same with no history: %.0f ms",
        BenchSupport.median(pairs[1]));
    double[] ratios = Figure.ratios(pairs[0], pairs[1]);
    return target ? Figure.atMost(name, baseline, ratios, 1.1)
        : Figure.reported(name, baseline, ratios);
  }

  /** The sizes of the two files, for the figure's name. */
  private String sizes(Path big, Path none) throws Exception {
    return String.format("%.0f MB and %.1f MB", Files.size(engine.dataFile(big)) / 1e6,
        Files.size(engine.dataFile(none)) / 1e6);
  }

  /** Prints the history times and the no-history times of {@link #alternatingPairs}. */
  private void printPairs(String what, double[][] pairs) {
    row(String.format("%s, %,d rows, ms", what, rows), pairs[0], Double.NaN);
    row(String.format("baseline: the same with no history (%,d rows), ms", open), pairs[1],
        Double.NaN);
  }

  /** One timed start, in milliseconds. */
  private interface Start {
    double millis() throws Exception;
  }

  /**
   * One pair of {@code history} and {@code fresh} not counted, then {@code pairs} pairs, the one
   * measured first alternating. Returns {history times, fresh times}.
   */
  private static double[][] alternatingPairs(int pairs, Start history, Start fresh)
      throws Exception {
    history.millis();
    fresh.millis();
    double[][] times = new double[2][pairs];
    for (int r = 0; r < pairs; r++) {
      if (r % 2 == 0) {
        times[0][r] = history.millis();
        times[1][r] = fresh.millis();
      } else {
        times[1][r] = fresh.millis();
        times[0][r] = history.millis();
      }
    }
    return times;
  }

  /** Milliseconds from opening {@code file} to the first request a started replayer sends. */
  private double millisToFirstRequest(Path file) throws Exception {
    return millisToFirstRequest(file, engine, () -> { });
  }

  /**
   * Milliseconds from {@code H2Database.open} to the first request a started replayer sends;
   * {@code onFirstRequest} runs once it has left, before the replayer and the file are closed.
   */
  static double millisToFirstRequest(Path file, BenchEngine engine, Runnable onFirstRequest)
      throws Exception {
    CountDownLatch sent = new CountDownLatch(1);
    long[] at = new long[1];
    Transport transport = AckingTransport.acking(command -> {
      synchronized (at) {
        if (sent.getCount() > 0) {
          at[0] = System.nanoTime();
          sent.countDown();
        }
      }
    });
    System.gc();
    long t0 = System.nanoTime();
    try (JdbcDatabase db = open(engine, file)) {
      JdbcOutboxStore store = JdbcOutboxStore.openExisting(db);
      try (Replayer<Connection> replayer =
          Replayer.builder(store, transport).build()) {
        replayer.start();
        if (!sent.await(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("no request within 60 s");
        }
        onFirstRequest.run();
      }
    }
    return (at[0] - t0) / 1e6;
  }

  /** Changes one row's {@code updated_at} (not indexed), so no cached query result is reused. */
  private static void touch(JdbcDatabase db) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.executeUpdate("UPDATE outbox_command SET updated_at = updated_at + 1 WHERE seq = 1");
    }
  }

  /** The rows the recovery read before idx_outbox_status: the claim index's whole due range. */
  private static long claimRangeRecoveryRead(JdbcDatabase db) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM outbox_command"
            + db.dialect().indexHint("idx_outbox_claim")
            + " WHERE claim_due <= ? AND status = 'sending'")) {
      ps.setLong(1, System.currentTimeMillis());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static long fullScanCount(JdbcDatabase db) throws Exception {
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
