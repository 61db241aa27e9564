package dev.outboxreplay.benchmarks;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.http.OkHttpClients;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/** Helpers shared by the benchmarks. */
final class BenchSupport {
  private static final MediaType JSON = MediaType.get("application/json");

  private BenchSupport() {}

  /** CPU time this process has used so far, all threads. */
  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** The {@code p} quantile of {@code nanos} (nearest rank), in milliseconds. */
  static double percentileMillis(long[] nanos, double p) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return sorted[Math.max(0, Math.min(sorted.length - 1,
        (int) Math.ceil(p * sorted.length) - 1))] / 1e6;
  }

  /**
   * Accepts {@code count} commands made by {@code command}, 1,000 per {@code acceptAll} (one
   * transaction each), as a backlog left by days offline; prints progress every 100,000 when
   * {@code progress} is set.
   */
  static void acceptBacklog(dev.outboxreplay.Outbox<?> outbox, int count,
      java.util.function.IntFunction<dev.outboxreplay.OutboxCommand> command, boolean progress) {
    long started = System.nanoTime();
    java.util.List<dev.outboxreplay.OutboxCommand> batch = new java.util.ArrayList<>();
    for (int n = 0; n < count; n++) {
      batch.add(command.apply(n));
      if (batch.size() == 1_000) {
        outbox.acceptAll(batch);
        batch.clear();
      }
      if (progress && n % 100_000 == 99_999) {
        System.out.printf("  accepted %,d after %.0f s%n", n + 1,
            (System.nanoTime() - started) / 1e9);
      }
    }
    outbox.acceptAll(batch);
  }

  static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  /** An outbox-configured OkHttp client allowing {@code concurrency} calls at once to one host. */
  static OkHttpClient client(int concurrency) {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(concurrency);
    dispatcher.setMaxRequestsPerHost(concurrency);
    return OkHttpClients.configure(new OkHttpClient.Builder(), Duration.ofSeconds(30))
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(concurrency, 1, TimeUnit.MINUTES))
        .build();
  }

  /**
   * A POST of {@code body} to {@code url} with the idempotency key as an RFC 8941 string, its
   * Content-Digest, and {@code headers}: the request the outbox transport builds.
   */
  static Request post(String url, String key, byte[] body, Map<String, String> headers) {
    Request.Builder request = new Request.Builder().url(url)
        .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key))
        .header(HttpContract.CONTENT_DIGEST, HttpContract.contentDigest(body))
        .post(RequestBody.create(body, JSON));
    headers.forEach(request::header);
    return request.build();
  }

  /**
   * The request the outbox's HTTP transport sends for a command with {@code commandId},
   * {@code key} and canonical {@code body} under the default session and tenant.
   */
  static Request replayedPost(String url, String key, java.util.UUID commandId, byte[] body) {
    return post(url, key, body, Map.of(
        HttpContract.COMMAND_ID, commandId.toString(),
        HttpContract.SESSION_VERSION, "0",
        HttpContract.TENANT, HttpContract.DEFAULT_TENANT));
  }

  /**
   * Sends {@code count} requests from {@code concurrency} threads, each the one
   * {@code requestFor} builds for its number, and returns requests per second. Any answer other
   * than 201 fails the run.
   */
  static double postLoop(OkHttpClient client, int concurrency, int count,
      IntFunction<Request> requestFor) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    AtomicInteger next = new AtomicInteger();
    long start = System.nanoTime();
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < concurrency; t++) {
        futures.add(pool.submit(() -> {
          int n;
          while ((n = next.getAndIncrement()) < count) {
            try (Response response = client.newCall(requestFor.apply(n)).execute()) {
              response.body().bytes();
              if (response.code() != 201) {
                throw new IOException("unexpected " + response.code());
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return count / ((System.nanoTime() - start) / 1e9);
  }

  static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
