package dev.outboxreplay.benchmarks;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.IdempotencyKeyStrategy;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.internal.CommandIdGenerator;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Replays {@code commands} queued commands (over {@code entities} entities, 100 by default) to
 * the reference server on loopback, next to a raw OkHttp POST loop with no client database that
 * sends the very requests the replayer sends (same command ids, keys, bodies and headers) to a
 * fresh reference server at the same concurrency: the baseline. A second raw loop differs only
 * in its keys, short and sequential ({@code raw-0}, {@code raw-1}, ...), and shows how much the
 * server's cost depends on the key shape. A third side replays the same backlog with the same
 * requests through {@link LeastReplayer}, the least any replayer of this table does around each
 * request: it bounds the ratio a replayer can reach on the machine. Same run; medians over
 * rounds, after two warm-up rounds of each.
 *
 * <p>With {@code trivialReceiver}, both sides send to a JDK {@code HttpServer} that reads the
 * request and answers 201 with a small body instead: no server database, so the figure shows
 * what the client side costs (the reference server's own database hides it).
 */
final class ReplayBenchmark {
  private final int commands;
  private final int concurrency;
  private final int rounds;
  private final int entities;
  private final boolean trivialReceiver;
  private final BenchEngine engine;
  /** The replayer's pass thread, which does every write of a pass (see {@code Replayer}). */
  private static final String PASS_THREAD = "outbox-replayer";
  /** The replayer's sender threads, which do the network I/O. */
  private static final String SENDER_THREADS = "outbox-sender";
  private final CommandIdGenerator ids =
      new CommandIdGenerator(Clock.systemUTC(), new SplittableRandom());

  ReplayBenchmark(int commands, int concurrency, int rounds, int entities) {
    this(commands, concurrency, rounds, entities, false, BenchEngine.H2);
  }

  ReplayBenchmark(int commands, int concurrency, int rounds, int entities,
      boolean trivialReceiver, BenchEngine engine) {
    this.engine = engine;
    this.commands = commands;
    this.concurrency = concurrency;
    this.rounds = rounds;
    this.entities = entities;
    this.trivialReceiver = trivialReceiver;
  }

  /** Where the requests go: the reference server with its database, or the trivial one. */
  private record Receiver(String baseUrl, Runnable closer) implements AutoCloseable {
    @Override
    public void close() {
      closer.run();
    }
  }

  private Receiver receiver(Path dir) throws IOException {
    if (trivialReceiver) {
      TrivialReceiver trivial = TrivialReceiver.start(16);
      return new Receiver(trivial.baseUrl(), trivial::close);
    }
    H2Database db = serverDatabase(dir);
    IdempotentServer server;
    try {
      server = server(db);
    } catch (IOException | RuntimeException e) {
      db.close();
      throw e;
    }
    return new Receiver(server.baseUrl(), () -> {
      try {
        server.close();
      } finally {
        db.close();
      }
    });
  }

  List<Figure> run() throws Exception {
    System.out.printf("replay benchmark: %d commands over %d entities, concurrency %d, "
        + "%d rounds, loopback, %s outbox, %s%n", commands, entities, concurrency, rounds, engine,
        trivialReceiver ? "trivial receiver (JDK HttpServer answering 201)"
            : "reference server");
    double[] raw = new double[rounds];
    double[] shortKeys = new double[rounds];
    double[] replay = new double[rounds];
    double[] rawCpu = new double[rounds];
    double[] replayCpu = new double[rounds];
    double[] least = new double[rounds];
    double[] leastCpu = new double[rounds];
    // Two warm-up rounds, not measured: the server's code keeps getting faster through the first.
    for (int warmUp = 0; warmUp < 2; warmUp++) {
      List<CommandId> round = newIds();
      rawPosts(round, false);
      if (!trivialReceiver) {
        rawPosts(round, true);
      }
      replay(round);
      leastReplay(round);
    }
    for (int round = 0; round < rounds; round++) {
      List<CommandId> roundIds = newIds();
      Measured r = rawPosts(roundIds, false);
      Measured p = replay(roundIds);
      raw[round] = r.perSecond();
      replay[round] = p.perSecond();
      rawCpu[round] = r.cpuMicrosPerCommand();
      replayCpu[round] = p.cpuMicrosPerCommand();
      Measured l = leastReplay(roundIds);
      least[round] = l.perSecond();
      leastCpu[round] = l.cpuMicrosPerCommand();
      String keys = "";
      if (!trivialReceiver) { // the trivial receiver's cost does not depend on the key
        shortKeys[round] = rawPosts(roundIds, true).perSecond();
        keys = String.format(" (short keys %.0f/s)", shortKeys[round]);
      }
      System.out.printf("  round %d: raw OkHttp %.0f/s%s, replayer %.0f/s (%.2f); CPU per "
          + "command %.0f us vs %.0f us%n    per replayed command: %s%n"
          + "    least replayer %.0f/s (%.2f), %.0f us CPU per command; the replayer is %.2f of "
          + "it%n      per command: %s%n", round + 1, raw[round], keys, replay[round],
          replay[round] / raw[round], rawCpu[round], replayCpu[round], p.threads(), least[round],
          least[round] / raw[round], leastCpu[round], replay[round] / least[round], l.threads());
    }
    boolean oneEntity = concurrency == 1 && entities == 1;
    // SQLite's target is the storage-boundary issue's: at least 0.5 of the raw loop, trivial
    // receiver, 8 senders
    double target = engine == BenchEngine.SQLITE ? 0.5
        : trivialReceiver || oneEntity ? 0.6 : 0.7;
    double r = BenchSupport.median(raw);
    double p = BenchSupport.median(replay);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("raw OkHttp POST loop, no database : %7.0f commands/s (baseline), "
        + "%4.0f us CPU per command%n", r, BenchSupport.median(rawCpu));
    System.out.printf("replayer from the %-6s outbox   : %7.0f commands/s, ratio %.2f "
        + "(target >= %.2f), %4.0f us CPU per command%n", engine, p, p / r, target,
        BenchSupport.median(replayCpu));
    System.out.printf("least replayer (bound)           : %7.0f commands/s, ratio %.2f, "
        + "%4.0f us CPU per command%n", BenchSupport.median(least),
        BenchSupport.median(least) / r, BenchSupport.median(leastCpu));
    if (!trivialReceiver) {
      double k = BenchSupport.median(shortKeys);
      System.out.printf("raw loop with short sequential keys: %6.0f commands/s; the replayer "
          + "is %.2f of it%n", k, p / k);
    }
    System.out.println("(CPU: this process, client and receiver together)");
    List<Figure> figures = new ArrayList<>();
    String client = engine == BenchEngine.H2 ? "" : " (" + engine + " outbox)";
    figures.add(Figure.atLeast((trivialReceiver
        ? "replay, " + concurrency + " senders, trivial receiver"
        : oneEntity ? "replay, one entity, one sender" : "replay, " + concurrency + " senders")
        + client,
        trivialReceiver
            ? "raw OkHttp loop of the same requests to a JDK HttpServer answering 201"
            : "raw OkHttp loop of the same requests to the reference server",
        Figure.ratios(replay, raw), target));
    // the bound: what the least replayer reaches against the same raw loop, and the replayer
    // against it
    String shape = trivialReceiver ? concurrency + " senders, trivial receiver"
        : concurrency + " senders";
    figures.add(Figure.reported("least replayer (bound), " + shape + client,
        trivialReceiver
            ? "raw OkHttp loop of the same requests to a JDK HttpServer answering 201"
            : "raw OkHttp loop of the same requests to the reference server",
        Figure.ratios(least, raw)));
    figures.add(Figure.reported("replay vs least replayer, " + shape + client,
        "least replayer: the same backlog, requests and receiver", Figure.ratios(replay, least)));
    if (concurrency > 1 && engine == BenchEngine.H2) {
      figures.add(acceptDuringDrain());
    }
    return figures;
  }

  /**
   * Single accepts, 2 ms apart, while the replayer drains {@code commands} queued commands,
   * against the same accepts on the same database just before the drain: the p99 of each, per
   * round. With the reference server in the same JVM both sides compete for the cores; the
   * trivial receiver's variant leaves mostly the client's own share.
   *
   * <p>1,000 accepts per side, so each p99 is the 10th slowest: with 300 it was the 3rd, and the
   * same code gave 9.43, 5.48 and 4.18 in three runs on one machine (3.87, 4.61 and 3.66 with
   * 1,000). The drain is still running when the samples end.
   */
  private Figure acceptDuringDrain() throws Exception {
    int samples = 1000;
    double[] ratios = new double[rounds];
    for (int round = 0; round < rounds; round++) {
      Path dir = Files.createTempDirectory("replay-bench-accept");
      try (Receiver server = receiver(dir);
          H2Database clientDb = clientDatabase(dir)) {
        H2OutboxStore store = H2OutboxStore.create(clientDb);
        Outbox<Connection> outbox = Outbox.builder(store).build();
        BenchSupport.acceptBacklog(outbox, commands, n -> OutboxCommand.ofJson(
            NotesApplication.OPERATION, entity(n), body(n)), false);
        ThreadTimes alone = timeAccepts(outbox, samples, "alone");
        OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(server.baseUrl()))
            .client(BenchSupport.client(concurrency)).build();
        ThreadTimes draining;
        try (Replayer<Connection> replayer = Replayer.builder(store, transport)
            .concurrency(concurrency).batchSize(100).build()) {
          replayer.start();
          draining = timeAccepts(outbox, samples, "draining");
          int left = store.countByStatus().getOrDefault(Status.QUEUED, 0L).intValue();
          if (!replayer.awaitDrained(Duration.ofMinutes(10))) {
            throw new IllegalStateException("replay stalled: " + store.countByStatus());
          }
          System.out.printf("  accept p99 alone %.2f ms, while draining %.2f ms (%,d still "
              + "queued after the samples)%n", p99(alone), p99(draining), left);
          System.out.printf("    alone, %s%n    draining, %s%n", alone.slowest(0.01),
              draining.slowest(0.01));
        }
        ratios[round] = p99(draining) / p99(alone);
      } finally {
        BenchSupport.deleteTree(dir);
      }
    }
    if (trivialReceiver) {
      // the receiver takes next to no CPU here: what is left is the client's own interference
      return Figure.reported("single accept p99 while " + commands + " commands drain to a "
          + "trivial receiver", "the same accepts just before the drain, same database", ratios);
    }
    return Figure.atMost("single accept p99 while " + commands + " commands drain",
        "the same accepts just before the drain, same database", ratios, 3);
  }

  private static double p99(ThreadTimes accepts) {
    return BenchSupport.percentileMillis(accepts.wallNanos(), 0.99);
  }

  /** Times {@code samples} single accepts, 2 ms apart, on this thread. */
  private ThreadTimes timeAccepts(Outbox<Connection> outbox, int samples, String tag)
      throws InterruptedException {
    ThreadTimes times = new ThreadTimes(samples);
    for (int i = 0; i < samples; i++) {
      times.start();
      outbox.accept(OutboxCommand.ofJson(NotesApplication.OPERATION, "probe-" + tag + "-" + i,
          "{\"entity\":\"probe\",\"seq\":" + i + "}"));
      times.stop(i);
      Thread.sleep(2);
    }
    return times;
  }

  /** The reference server's database in {@code dir}, with a pool for its request threads. */
  private static H2Database serverDatabase(Path dir) {
    return H2Database.builder().file(dir.resolve("server")).maxPoolSize(24).build();
  }

  /** The replaying client's database in {@code dir}, with a connection per sender and spare. */
  private H2Database clientDatabase(Path dir) {
    return H2Database.builder().file(dir.resolve("client")).maxPoolSize(concurrency + 4).build();
  }

  /**
   * A timed section: commands per second, this process's CPU time per command, and for a replay
   * where its pass thread and its senders spent their time.
   */
  private record Measured(double perSecond, double cpuMicrosPerCommand, String threads) {}

  private Measured measure(long startNanos, long startCpuNanos) {
    return measure(startNanos, startCpuNanos, "");
  }

  private Measured measure(long startNanos, long startCpuNanos, String threads) {
    long elapsed = System.nanoTime() - startNanos;
    long cpu = BenchSupport.processCpuNanos() - startCpuNanos;
    return new Measured(commands / (elapsed / 1e9), cpu / 1e3 / commands, threads);
  }

  private List<CommandId> newIds() {
    List<CommandId> fresh = new ArrayList<>(commands);
    for (int n = 0; n < commands; n++) {
      fresh.add(ids.next());
    }
    return fresh;
  }

  private String entity(int n) {
    return "e" + (n % entities);
  }

  /** Already canonical (sorted keys, no spaces): stored and sent byte for byte. */
  private String body(int n) {
    return "{\"body\":\"note\",\"entity\":\"" + entity(n) + "\",\"seq\":" + n + "}";
  }

  /**
   * Command {@code n}'s request as the HTTP transport sends it under the default session, or
   * with the key {@code raw-n} instead of its own.
   */
  private Request request(String url, List<CommandId> roundIds, int n, boolean shortKey) {
    CommandId id = roundIds.get(n);
    String key = shortKey ? "raw-" + n
        : IdempotencyKeyStrategy.DEFAULT.keyFor(NotesApplication.OPERATION, entity(n), id);
    return BenchSupport.replayedPost(url, key, id.value(),
        body(n).getBytes(StandardCharsets.UTF_8));
  }

  private Measured rawPosts(List<CommandId> roundIds, boolean shortKeys) throws Exception {
    Path dir = Files.createTempDirectory("replay-bench");
    try (Receiver server = receiver(dir)) {
      OkHttpClient client = BenchSupport.client(concurrency);
      String url = server.baseUrl() + "/" + NotesApplication.OPERATION;
      // built before the clock starts, as the replayer's keys, bytes and digests are stored
      List<Request> requests = new ArrayList<>(commands);
      for (int n = 0; n < commands; n++) {
        requests.add(request(url, roundIds, n, shortKeys));
      }
      try {
        System.gc(); // no side pays for the garbage the one before it left
        long start = System.nanoTime();
        long cpu = BenchSupport.processCpuNanos();
        BenchSupport.postLoop(client, concurrency, commands, requests::get);
        return measure(start, cpu);
      } finally {
        client.dispatcher().executorService().shutdown();
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private Measured replay(List<CommandId> roundIds) throws Exception {
    return onBacklog(roundIds, (server, clientDb, store) -> {
      OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(server.baseUrl()))
          .client(BenchSupport.client(concurrency)).build();
      try (Replayer<Connection> replayer = Replayer.builder(store, transport)
          .concurrency(concurrency).batchSize(100).build()) {
        System.gc(); // no side pays for the garbage the one before it left
        ThreadGroupTimes pass = ThreadGroupTimes.of(PASS_THREAD);
        ThreadGroupTimes senders = ThreadGroupTimes.of(SENDER_THREADS);
        long start = System.nanoTime();
        long cpu = BenchSupport.processCpuNanos();
        replayer.start();
        if (!replayer.awaitDrained(Duration.ofMinutes(10))) {
          throw new IllegalStateException("replay stalled: " + store.countByStatus());
        }
        // read while the replayer's threads still run: a thread that ended takes its times along
        String threads = ThreadGroupTimes.of(PASS_THREAD).perCommandSince(pass, commands) + "; "
            + ThreadGroupTimes.of(SENDER_THREADS).perCommandSince(senders, commands);
        Measured measured = measure(start, cpu, threads);
        if (store.countByStatus().get(Status.ACKED) < commands) {
          throw new IllegalStateException("replay stalled: " + store.countByStatus());
        }
        return measured;
      }
    });
  }

  /** The round's commands accepted into {@code clientDb}, as the replayer finds them. */
  private JdbcOutboxStore backlog(JdbcDatabase clientDb, List<CommandId> roundIds) {
    JdbcOutboxStore store = JdbcOutboxStore.create(clientDb);
    Outbox<Connection> outbox = Outbox.builder(store).build();
    BenchSupport.acceptBacklog(outbox, commands, n -> OutboxCommand.ofJson(
        NotesApplication.OPERATION, entity(n), body(n)).withCommandId(roundIds.get(n)), false);
    for (int n : new int[] {0, commands - 1}) { // the baseline must send what the replayer sends
      String stored = store.find(roundIds.get(n)).orElseThrow().payload().json();
      if (!stored.equals(body(n))) {
        throw new IllegalStateException("stored " + stored + " differs from " + body(n));
      }
    }
    return store;
  }

  /** The same backlog replayed by {@link LeastReplayer}, with the raw loop's requests. */
  private Measured leastReplay(List<CommandId> roundIds) throws Exception {
    return onBacklog(roundIds, (server, clientDb, store) -> {
      OkHttpClient client = BenchSupport.client(concurrency);
      LeastReplayer least = new LeastReplayer(clientDb, client, concurrency);
      String url = server.baseUrl() + "/" + NotesApplication.OPERATION;
      List<FloorProbe.Row> rows = least.rows();
      List<Request> requests = new ArrayList<>(commands);
      for (int n = 0; n < commands; n++) {
        if (!rows.get(n).id().equals(roundIds.get(n).value())) {
          throw new IllegalStateException("row " + n + " is not command " + roundIds.get(n));
        }
        requests.add(request(url, roundIds, n, false));
      }
      try {
        System.gc(); // no side pays for the garbage the one before it left
        long start = System.nanoTime();
        long cpu = BenchSupport.processCpuNanos();
        String threads = least.replay(rows, requests); // returns with every row acked
        return measure(start, cpu, threads);
      } finally {
        client.dispatcher().executorService().shutdown();
      }
    });
  }

  /** A replay of a fresh backlog: the receiver, the client's file and its store with the round. */
  private interface OnBacklog {
    Measured replay(Receiver server, JdbcDatabase clientDb, JdbcOutboxStore store)
        throws Exception;
  }

  /**
   * Runs {@code replay} on a fresh receiver and a fresh client file holding the round's commands,
   * then deletes both.
   */
  private Measured onBacklog(List<CommandId> roundIds, OnBacklog replay) throws Exception {
    Path dir = Files.createTempDirectory("replay-bench");
    try (Receiver server = receiver(dir);
        JdbcDatabase clientDb = engine.open(dir.resolve("client"), concurrency + 4,
            Durability.PROCESS_CRASH_SAFE)) {
      return replay.replay(server, clientDb, backlog(clientDb, roundIds));
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private static IdempotentServer server(H2Database db) throws IOException {
    NotesApplication notes = new NotesApplication(db);
    return IdempotentServer.builder().database(db).threads(16)
        .handler(NotesApplication.OPERATION, notes.handler()).start();
  }


}
