package dev.outboxreplay.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import okhttp3.OkHttpClient;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Requests per second of the receiver on PostgreSQL, next to a bare Jetty handler that runs the
 * same application handler (the same effect row) on the same database without the guard: one node for first requests (a
 * claim commit plus the effect-and-answer commit) and repeats (the stored answer), and two nodes
 * in this JVM, each with its own pool, taking alternate first requests. Same OkHttp client, same
 * concurrency, same PostgreSQL (started on loopback for the run), medians over rounds. CPU per
 * request is the process's and PostgreSQL's server processes', each over the whole measurement.
 */
final class PostgresReceiverBenchmark {
  private final int requests;
  private final int concurrency;
  private final int rounds;
  private final AtomicInteger keys = new AtomicInteger();

  PostgresReceiverBenchmark(int requests, int concurrency, int rounds) {
    this.requests = requests;
    this.concurrency = concurrency;
    this.rounds = rounds;
  }

  /** One measurement: requests per second and CPU microseconds per request on both sides. */
  private record Measured(double rate, double jvmCpuMicros, double postgresCpuMicros) {}

  List<Figure> run() throws Exception {
    System.out.printf("receiver on PostgreSQL: %d requests per measurement, %d concurrent "
        + "clients, %d rounds, loopback, %d cores%n", requests, concurrency, rounds,
        Runtime.getRuntime().availableProcessors());
    OkHttpClient client = BenchSupport.client(concurrency);
    double[] bare = new double[rounds];
    double[] first = new double[rounds];
    double[] repeat = new double[rounds];
    double[] twoNodes = new double[rounds];
    try (LoopbackPostgres postgres = LoopbackPostgres.start()) {
      long serverPid = postgres.serverPid();
      for (int round = 0; round < rounds; round++) {
        String database = postgres.newDatabase();
        try (HikariDataSource pool1 = postgres.pool(database, concurrency + 4);
            HikariDataSource pool2 = postgres.pool(database, concurrency + 4)) {
          NotesApplication notes = NotesApplication.onPostgres(pool1);
          Server plain = bareServer(pool1, notes);
          Measured b;
          try {
            String url = "http://127.0.0.1:" + ((ServerConnector) plain.getConnectors()[0])
                .getLocalPort() + "/note.put";
            load(client, n -> url, n -> "bare-warm-" + n, requests / 4, serverPid);
            b = load(client, n -> url, n -> "bare-" + n, requests, serverPid);
          } finally {
            plain.stop();
          }
          IdempotentServer one = node(pool1, "node-1", notes);
          IdempotentServer two = node(pool2, "node-2", NotesApplication.onPostgres(pool2));
          Measured f;
          Measured r;
          Measured t;
          try {
            String url1 = one.baseUrl() + "/note.put";
            String url2 = two.baseUrl() + "/note.put";
            int base = keys.getAndAdd(10 * requests);
            load(client, n -> url1, n -> "warm-" + (base + n), requests / 4, serverPid);
            f = load(client, n -> url1, n -> "key-" + (base + n), requests, serverPid);
            r = load(client, n -> url1, n -> "key-" + (base + n), requests, serverPid);
            t = load(client, n -> n % 2 == 0 ? url1 : url2, n -> "two-" + (base + n), requests,
                serverPid);
            if (notes.keysAppliedMoreThanOnce() != 0) {
              throw new IllegalStateException("a key was applied twice");
            }
          } finally {
            one.close();
            two.close();
          }
          bare[round] = b.rate();
          first[round] = f.rate();
          repeat[round] = r.rate();
          twoNodes[round] = t.rate();
          System.out.printf("  round %d: bare %.0f/s (CPU/request: JVM %.0f us, PostgreSQL "
              + "%.0f us); first %.0f/s (%.0f us, %.0f us); repeat %.0f/s (%.0f us, %.0f us); "
              + "two nodes %.0f/s (%.0f us, %.0f us)%n", round + 1,
              b.rate(), b.jvmCpuMicros(), b.postgresCpuMicros(),
              f.rate(), f.jvmCpuMicros(), f.postgresCpuMicros(),
              r.rate(), r.jvmCpuMicros(), r.postgresCpuMicros(),
              t.rate(), t.jvmCpuMicros(), t.postgresCpuMicros());
        }
      }
    } finally {
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
    double b = BenchSupport.median(bare);
    double one = BenchSupport.median(first);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("bare handler, same effect row : %7.0f req/s (baseline)%n", b);
    System.out.printf("one node, first requests      : %7.0f req/s, ratio %.2f%n", one, one / b);
    System.out.printf("one node, repeats             : %7.0f req/s, ratio %.2f%n",
        BenchSupport.median(repeat), BenchSupport.median(repeat) / b);
    System.out.printf("two nodes, first requests     : %7.0f req/s, %.2f of one node%n",
        BenchSupport.median(twoNodes), BenchSupport.median(twoNodes) / one);
    double[] twoOverOne = new double[rounds];
    for (int i = 0; i < rounds; i++) {
      twoOverOne[i] = twoNodes[i] / first[i];
    }
    return List.of(
        Figure.atLeast("PostgreSQL receiver, first requests", "bare handler, same row",
            Figure.ratios(first, bare), 0.7),
        Figure.atLeast("PostgreSQL receiver, repeats", "bare handler, same row",
            Figure.ratios(repeat, bare), 1.0),
        Figure.atLeast("PostgreSQL receiver, two nodes (one JVM)", "one node", twoOverOne,
            1.6));
  }

  private static IdempotentServer node(HikariDataSource pool, String name,
      NotesApplication notes) throws IOException {
    return IdempotentServer.builder()
        .records(JdbcIdempotencyRecords.onPostgres(pool, name, Duration.ofSeconds(30)))
        .handler(NotesApplication.OPERATION, notes.handler())
        .start();
  }

  private Measured load(OkHttpClient client, IntFunction<String> urlFor,
      IntFunction<String> keyFor, int count, long serverPid) throws Exception {
    long jvmBefore = BenchSupport.processCpuNanos();
    long pgBefore = postgresCpuNanos(serverPid);
    double rate = BenchSupport.postLoop(client, concurrency, count, n -> BenchSupport.post(
        urlFor.apply(n), keyFor.apply(n), ("{\"body\":\"hello\",\"entity\":\"e" + (n % 50)
            + "\",\"seq\":" + n + "}").getBytes(StandardCharsets.UTF_8), Map.of()));
    double jvm = (BenchSupport.processCpuNanos() - jvmBefore) / 1e3 / count;
    double pg = (postgresCpuNanos(serverPid) - pgBefore) / 1e3 / count;
    return new Measured(rate, jvm, pg);
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
