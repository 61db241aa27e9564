package dev.outboxreplay.benchmarks;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Requests per second against the reference idempotent server, for first requests (each a new
 * key: one started-record commit plus one business commit) and for repeats (stored answer),
 * next to a bare Jetty handler that does no idempotency work. Same OkHttp client, same
 * concurrency, same run; medians over rounds, the three measured back to back in each round.
 */
final class ServerBenchmark {
  private static final MediaType JSON = MediaType.get("application/json");
  private final int requests;
  private final int concurrency;
  private final int rounds;
  private final AtomicInteger keys = new AtomicInteger();

  ServerBenchmark(int requests, int concurrency, int rounds) {
    this.requests = requests;
    this.concurrency = concurrency;
    this.rounds = rounds;
  }

  List<Figure> run() throws Exception {
    System.out.printf("server benchmark: %d requests per measurement, %d concurrent clients, "
        + "%d rounds, loopback%n", requests, concurrency, rounds);
    OkHttpClient client = BenchSupport.client(concurrency);
    double[] bare = new double[rounds];
    double[] first = new double[rounds];
    double[] repeat = new double[rounds];
    for (int round = 0; round < rounds; round++) {
      byte[] applied = "{\"applied\":true,\"arrival\":1}".getBytes(StandardCharsets.UTF_8);
      Server plain = bareServer((request, body) -> applied);
      try {
        String url = "http://127.0.0.1:" + ((ServerConnector) plain.getConnectors()[0])
            .getLocalPort() + "/note.put";
        load(client, url, n -> "bare-" + n, requests / 4);
        bare[round] = load(client, url, n -> "bare-" + n, requests);
      } finally {
        plain.stop();
      }
      Path dir = Files.createTempDirectory("server-bench");
      try (H2Database db = H2Database.builder().file(dir.resolve("server"))
          .maxPoolSize(concurrency + 4).build()) {
        NotesApplication notes = new NotesApplication(db);
        IdempotentServer server = IdempotentServer.builder().database(db)
            .handler(NotesApplication.OPERATION, notes.handler()).start();
        try {
          String url = server.baseUrl() + "/note.put";
          int base = keys.getAndAdd(10 * requests);
          load(client, url, n -> "warm-" + (base + n), requests / 4);
          first[round] = load(client, url, n -> "key-" + (base + n), requests);
          repeat[round] = load(client, url, n -> "key-" + (base + n), requests);
          if (notes.keysAppliedMoreThanOnce() != 0) {
            throw new IllegalStateException("a key was applied twice");
          }
        } finally {
          server.close();
        }
      } finally {
        BenchSupport.deleteTree(dir);
      }
      System.out.printf("  round %d: bare %.0f/s, first %.0f/s, repeat %.0f/s%n", round + 1,
          bare[round], first[round], repeat[round]);
    }
    double b = BenchSupport.median(bare);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("bare Jetty handler          : %7.0f req/s (baseline, no idempotency)%n", b);
    System.out.printf("first requests (new keys)   : %7.0f req/s, ratio %.2f%n",
        BenchSupport.median(first),
        BenchSupport.median(first) / b);
    System.out.printf("repeats (stored answers)    : %7.0f req/s, ratio %.2f%n",
        BenchSupport.median(repeat),
        BenchSupport.median(repeat) / b);
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
    return List.of(
        Figure.reported("reference server, first requests", "bare Jetty handler",
            Figure.ratios(first, bare)),
        Figure.reported("reference server, repeats", "bare Jetty handler",
            Figure.ratios(repeat, bare)));
  }

  private double load(OkHttpClient client, String url, IntFunction<String> keyFor, int count)
      throws Exception {
    return BenchSupport.postLoop(client, concurrency, count, n -> BenchSupport.post(url,
        keyFor.apply(n), ("{\"body\":\"hello\",\"entity\":\"e" + (n % 50) + "\",\"seq\":" + n
            + "}").getBytes(StandardCharsets.UTF_8), Map.of()));
  }

  /**
   * What a bare handler does with a request and the body it read: the answer body it sends
   * with 201.
   */
  @FunctionalInterface
  interface BareEffect {
    byte[] apply(Request request, byte[] body) throws Exception;
  }

  /**
   * The same route on a bare Jetty server on loopback, without idempotency work: reads the body,
   * applies {@code effect} (nothing, or the effect row a guarded handler would write) and
   * answers 201.
   */
  static Server bareServer(BareEffect effect) throws Exception {
    return plainServer(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback)
          throws Exception {
        ByteBuffer read = Content.Source.asByteBuffer(request);
        byte[] body = new byte[read.remaining()];
        read.get(body);
        byte[] answer = effect.apply(request, body);
        response.setStatus(201);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(answer), callback);
        return true;
      }
    });
  }

  /**
   * A started Jetty server on loopback that runs {@code handler} on Jetty's own threads, the
   * same server the bare baseline runs in.
   */
  static Server plainServer(Handler handler) throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool(24, 2);
    threads.setDaemon(true);
    Server server = new Server(threads);
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost(InetAddress.getLoopbackAddress().getHostAddress());
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    return server;
  }
}
