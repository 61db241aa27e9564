package dev.outboxreplay.benchmarks;

import com.gruelbox.transactionoutbox.Dialect;
import com.gruelbox.transactionoutbox.Instantiator;
import com.gruelbox.transactionoutbox.Persistor;
import com.gruelbox.transactionoutbox.Submitter;
import com.gruelbox.transactionoutbox.ThreadLocalContextTransactionManager;
import com.gruelbox.transactionoutbox.TransactionManager;
import com.gruelbox.transactionoutbox.TransactionOutbox;
import com.gruelbox.transactionoutbox.TransactionOutboxEntry;
import com.gruelbox.transactionoutbox.TransactionOutboxListener;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.testkit.ManualClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * This library side by side with {@code com.gruelbox:transactionoutbox-core} 4.2.268 (the most
 * used Java outbox library) on the same engine: each round opens a fresh H2 file through {@link
 * H2Database} (the same pool and settings for both) and measures, alternating which goes first:
 *
 * <ul>
 *   <li>accepts in the application's transaction, one thread: this library's {@code
 *       db.inTransaction(tx -> outbox.accept(tx, command))} against gruelbox's {@code
 *       transactionManager.inTransaction(() -> outbox.schedule(Sender.class).send(...))};
 *   <li>the same from {@code threads} threads;
 *   <li>delivery of {@code commands} queued commands to the trivial receiver (a JDK HttpServer
 *       answering 201) with {@code threads} workers: this library's {@link Replayer} with that
 *       concurrency, against gruelbox's {@code flush()} handing due entries to an executor of as
 *       many threads, each entry an OkHttp POST of the same body with its key.
 * </ul>
 *
 * <p>Each round also measures the least accept ({@link RawOutboxRow}): the row this library's
 * accept writes, inserted by plain JDBC in the same application transaction, from 1 and from
 * {@code threads} threads. Its ratio to gruelbox bounds what any accept that writes this row can
 * reach against gruelbox. It also measures the least replayer ({@link LeastReplayer}) on the
 * backlog this library's accept queues: its delivery ratio to gruelbox bounds what any replayer
 * that records each command's state before its request leaves can reach against gruelbox.
 *
 * Gruelbox's own submission right after each commit is held back while accepting (its submitter
 * drops the entry, which stays due in the table), so that its accept is measured alone, as this
 * library's is; its delivery then starts from the same backlog. Process CPU per command is
 * printed for both.
 */
final class GruelboxBenchmark {
  private static final String OPERATION = "note.put";
  private final int commands;
  private final int threads;
  private final int rounds;

  GruelboxBenchmark(int commands, int threads, int rounds) {
    this.commands = commands;
    this.threads = threads;
    this.rounds = rounds;
  }

  /** One measurement: commands per second and process CPU microseconds per command. */
  private record Measured(double perSecond, double cpuMicros) {}

  private enum Side {
    OURS, GRUELBOX
  }

  List<Figure> run() throws Exception {
    System.out.printf("gruelbox side by side: %,d commands, %d threads and workers, %d rounds, "
        + "H2 %s, one fresh file per measurement%n", commands, threads, rounds,
        org.h2.engine.Constants.VERSION);
    try (TrivialReceiver receiver = TrivialReceiver.start(2 * threads)) {
      for (Side side : Side.values()) { // warm-up, not counted
        accept(side, 1, Math.min(commands, 2_000));
        deliver(side, receiver, Math.min(commands, 2_000));
      }
      double[][] single = new double[2][rounds];
      double[][] many = new double[2][rounds];
      double[][] delivery = new double[2][rounds];
      double[][] singleCpu = new double[2][rounds];
      double[][] deliveryCpu = new double[2][rounds];
      double[] leastSingle = new double[rounds];
      double[] leastMany = new double[rounds];
      double[] leastDelivery = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        Side[] order = r % 2 == 0 ? new Side[] {Side.OURS, Side.GRUELBOX}
            : new Side[] {Side.GRUELBOX, Side.OURS};
        for (Side side : order) {
          int i = side.ordinal();
          Measured one = accept(side, 1, commands);
          single[i][r] = one.perSecond();
          singleCpu[i][r] = one.cpuMicros();
          many[i][r] = accept(side, threads, commands).perSecond();
          Measured sent = deliver(side, receiver, commands);
          delivery[i][r] = sent.perSecond();
          deliveryCpu[i][r] = sent.cpuMicros();
        }
        Measured leastOne = acceptLeast(1, commands);
        leastSingle[r] = leastOne.perSecond();
        leastMany[r] = acceptLeast(threads, commands).perSecond();
        leastDelivery[r] = deliverLeast(receiver, commands).perSecond();
        System.out.printf("  round %d: accept 1 thread %.0f vs %.0f/s (%.0f vs %.0f us CPU), "
            + "%d threads %.0f vs %.0f/s, delivery %.0f vs %.0f/s (%.0f vs %.0f us CPU) "
            + "(this library's figure first); least accept 1 thread %.0f/s (%.0f us CPU), "
            + "%d threads %.0f/s; least replayer %.0f/s%n", r + 1, single[0][r], single[1][r],
            singleCpu[0][r], singleCpu[1][r], threads, many[0][r], many[1][r], delivery[0][r],
            delivery[1][r], deliveryCpu[0][r], deliveryCpu[1][r], leastSingle[r],
            leastOne.cpuMicros(), threads, leastMany[r], leastDelivery[r]);
      }
      String base = "gruelbox transactionoutbox 4.2.268, same H2 file settings, same round";
      return List.of(
          Figure.atLeast("accept in the application's transaction, 1 thread, vs gruelbox", base,
              Figure.ratios(single[0], single[1]), 1.2),
          Figure.reported("its CPU per accept, vs gruelbox", base,
              Figure.ratios(singleCpu[0], singleCpu[1])),
          Figure.atLeast("accept in the application's transaction, " + threads + " threads, vs "
              + "gruelbox", base, Figure.ratios(many[0], many[1]), 1.2),
          Figure.atLeast("delivery to the trivial receiver, " + threads + " workers, vs gruelbox",
              base, Figure.ratios(delivery[0], delivery[1]), 1.2),
          Figure.reported("its CPU per delivered command, vs gruelbox", base,
              Figure.ratios(deliveryCpu[0], deliveryCpu[1])),
          Figure.reported("least accept (the same row by plain JDBC), 1 thread, vs gruelbox",
              base, Figure.ratios(leastSingle, single[1])),
          Figure.reported("least accept (the same row by plain JDBC), " + threads + " threads, "
              + "vs gruelbox", base, Figure.ratios(leastMany, many[1])),
          Figure.reported("least replayer (bound), " + threads + " workers, vs gruelbox", base,
              Figure.ratios(leastDelivery, delivery[1])));
    }
  }

  private static String entity(int n) {
    return "note-" + (n % 100);
  }

  /** The command's JSON, its keys already in canonical (RFC 8785) order. */
  private static String body(int n) {
    return "{\"body\":\"" + "lorem ipsum ".repeat(8) + "\",\"id\":\"" + entity(n)
        + "\",\"n\":" + n + "}";
  }

  /** Accepts {@code count} commands from {@code threadCount} threads on a fresh file. */
  private Measured accept(Side side, int threadCount, int count) throws Exception {
    return accept(db -> side == Side.OURS ? ours(db) : gruelbox(db, null, null), threadCount,
        count);
  }

  /** {@link RawOutboxRow}'s inserts in the application's transaction, on a fresh file. */
  private Measured acceptLeast(int threadCount, int count) throws Exception {
    RawOutboxRow row = new RawOutboxRow();
    return accept(db -> {
      H2OutboxStore.create(db); // the library's tables and indexes
      return n -> db.inTransaction(tx -> {
        row.insert(db, tx, entity(n), body(n).getBytes(StandardCharsets.UTF_8));
        return null;
      });
    }, threadCount, count);
  }

  private Measured accept(Function<H2Database, Accepting> onFile, int threadCount, int count)
      throws Exception {
    Path dir = Files.createTempDirectory("gruelbox-bench");
    ExecutorService pool = Executors.newFixedThreadPool(threadCount);
    try (H2Database db = H2Database.builder().file(dir.resolve("outbox"))
        .maxPoolSize(threadCount + 4).build()) {
      Accepting accepting = onFile.apply(db);
      System.gc();
      long start = System.nanoTime();
      long cpu = BenchSupport.processCpuNanos();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threadCount; t++) {
        int first = t;
        done.add(pool.submit(() -> {
          for (int n = first; n < count; n += threadCount) {
            accepting.accept(n);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(10, TimeUnit.MINUTES);
      }
      return measured(count, start, cpu);
    } finally {
      pool.shutdownNow();
      BenchSupport.deleteTree(dir);
    }
  }

  /** Queues {@code count} commands on a fresh file, then delivers them all. */
  private Measured deliver(Side side, TrivialReceiver receiver, int count) throws Exception {
    Path dir = Files.createTempDirectory("gruelbox-bench");
    try (H2Database db = H2Database.builder().file(dir.resolve("outbox"))
        .maxPoolSize(threads + 4).build()) {
      return side == Side.OURS ? deliverOurs(db, receiver, count)
          : deliverGruelbox(db, receiver, count);
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  /**
   * The backlog this library's accept queues, delivered by {@link LeastReplayer} with the
   * requests this library's replayer sends, on a fresh file.
   */
  private Measured deliverLeast(TrivialReceiver receiver, int count) throws Exception {
    Path dir = Files.createTempDirectory("gruelbox-bench");
    OkHttpClient client = BenchSupport.client(threads);
    try (H2Database db = H2Database.builder().file(dir.resolve("outbox"))
        .maxPoolSize(threads + 4).build()) {
      Accepting accepting = ours(db);
      for (int n = 0; n < count; n++) {
        accepting.accept(n);
      }
      LeastReplayer least = new LeastReplayer(db, client, threads);
      List<FloorProbe.Row> rows = least.rows(); // accept order: row n is command n
      List<Request> requests = new ArrayList<>(count);
      String url = receiver.baseUrl() + "/" + OPERATION;
      for (int n = 0; n < count; n++) {
        FloorProbe.Row row = rows.get(n);
        requests.add(BenchSupport.replayedPost(url, row.key(), row.id(),
            body(n).getBytes(StandardCharsets.UTF_8)));
      }
      System.gc();
      long start = System.nanoTime();
      long cpu = BenchSupport.processCpuNanos();
      least.replay(rows, requests); // returns with every row acked
      return measured(count, start, cpu);
    } finally {
      client.dispatcher().executorService().shutdown();
      BenchSupport.deleteTree(dir);
    }
  }

  private Measured deliverOurs(H2Database db, TrivialReceiver receiver, int count)
      throws Exception {
    H2OutboxStore store = H2OutboxStore.create(db);
    Accepting accepting = ours(db, store);
    for (int n = 0; n < count; n++) {
      accepting.accept(n);
    }
    OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(receiver.baseUrl()))
        .client(BenchSupport.client(threads)).build();
    try (Replayer<Connection> replayer = Replayer.builder(store, transport)
        .concurrency(threads).batchSize(100).build()) {
      System.gc();
      long start = System.nanoTime();
      long cpu = BenchSupport.processCpuNanos();
      replayer.start();
      if (!replayer.awaitDrained(Duration.ofMinutes(10))
          || store.countByStatus().get(Status.ACKED) < count) {
        throw new IllegalStateException("replay stalled: " + store.countByStatus());
      }
      return measured(count, start, cpu);
    }
  }

  private Measured deliverGruelbox(H2Database db, TrivialReceiver receiver, int count)
      throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(threads);
    OkHttpClient client = BenchSupport.client(threads);
    try {
      ManualClock clock = new ManualClock(Instant.now());
      AtomicBoolean delivering = new AtomicBoolean();
      CountDownLatch delivered = new CountDownLatch(count);
      Sender sender = new Sender(client, receiver.baseUrl() + "/" + OPERATION);
      GruelboxAccepting accepting = gruelbox(db, clock, new Delivery(delivering, workers,
          delivered, sender));
      for (int n = 0; n < count; n++) {
        accepting.accept(n);
      }
      clock.advance(Duration.ofHours(1)); // every entry due; none was sent while accepting
      delivering.set(true);
      System.gc();
      long start = System.nanoTime();
      long cpu = BenchSupport.processCpuNanos();
      while (delivered.getCount() > 0) {
        if (!accepting.outbox().flush()) {
          delivered.await(5, TimeUnit.MILLISECONDS);
        }
      }
      return measured(count, start, cpu);
    } finally {
      workers.shutdownNow();
      client.dispatcher().executorService().shutdown();
    }
  }

  private Measured measured(int count, long start, long cpu) {
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Measured(count / seconds,
        (BenchSupport.processCpuNanos() - cpu) / 1e3 / count);
  }

  /** Accepts command number {@code n} in a transaction of the application. */
  private interface Accepting {
    void accept(int n) throws Exception;
  }

  private static Accepting ours(H2Database db) {
    return ours(db, H2OutboxStore.create(db));
  }

  private static Accepting ours(H2Database db, H2OutboxStore store) {
    Outbox<Connection> outbox = Outbox.builder(store).build();
    return n -> db.inTransaction(tx -> outbox.accept(tx,
        OutboxCommand.ofJson(OPERATION, entity(n), body(n))));
  }

  /** Gruelbox's accept, and the outbox it schedules into. */
  private record GruelboxAccepting(TransactionOutbox outbox,
      ThreadLocalContextTransactionManager transactions) implements Accepting {
    @Override
    public void accept(int n) throws IOException {
      transactions.inTransactionThrows(tx -> outbox.schedule(Sender.class).send(
          "k-" + n, entity(n), body(n)));
    }
  }

  /** What gruelbox does with an entry once it is handed one, and whether it may yet. */
  private record Delivery(AtomicBoolean delivering, ExecutorService workers,
      CountDownLatch delivered, Sender sender) {}

  /**
   * Gruelbox on the library's own pool of {@code db}, its tables made on first use. With {@code
   * delivery} null it never delivers; otherwise it delivers through {@code delivery}'s workers
   * once {@code delivering} is set, on {@code clock}.
   */
  private static GruelboxAccepting gruelbox(H2Database db, ManualClock clock, Delivery delivery) {
    ThreadLocalContextTransactionManager transactions =
        TransactionManager.fromDataSource(db.dataSource());
    Submitter submitter = (entry, processor) -> {
      if (delivery != null && delivery.delivering().get()) {
        delivery.workers().execute(() -> processor.accept(entry));
      }
    };
    TransactionOutbox.TransactionOutboxBuilder builder = TransactionOutbox.builder()
        .transactionManager(transactions)
        .persistor(Persistor.forDialect(Dialect.H2))
        .instantiator(Instantiator.using(type -> delivery == null ? new Sender(null, null)
            : delivery.sender()))
        .submitter(submitter)
        .attemptFrequency(Duration.ofMinutes(2))
        .flushBatchSize(4096);
    if (clock != null) {
      builder.clockProvider(() -> clock);
    }
    if (delivery != null) {
      builder.listener(new TransactionOutboxListener() {
        @Override
        public void success(TransactionOutboxEntry entry) {
          delivery.delivered().countDown();
        }
      });
    }
    return new GruelboxAccepting(builder.build(), transactions);
  }

  /** What gruelbox's entries call: a POST of the body, with its key, to the receiver. */
  public static class Sender {
    private final OkHttpClient client;
    private final String url;

    public Sender(OkHttpClient client, String url) {
      this.client = client;
      this.url = url;
    }

    /** Sends one command; throws (so gruelbox retries it) unless the receiver answered 2xx. */
    public void send(String key, String entity, String body) throws IOException {
      try (Response response = client.newCall(BenchSupport.post(url, key,
          body.getBytes(StandardCharsets.UTF_8), Map.of())).execute()) {
        if (!response.isSuccessful()) {
          throw new IOException("receiver answered " + response.code() + " for " + entity);
        }
      }
    }
  }
}
