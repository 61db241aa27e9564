package dev.outboxreplay.benchmarks;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.http.OkHttpClients;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
   * POSTs {@code count} requests to {@code url} from {@code concurrency} threads, each with the
   * key and body the functions give for its number and a Content-Digest, and returns requests
   * per second. Any answer other than 201 fails the run.
   */
  static double postLoop(OkHttpClient client, String url, int concurrency, int count,
      IntFunction<String> keyFor, IntFunction<String> bodyFor) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    AtomicInteger next = new AtomicInteger();
    long start = System.nanoTime();
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < concurrency; t++) {
        futures.add(pool.submit(() -> {
          int n;
          while ((n = next.getAndIncrement()) < count) {
            byte[] body = bodyFor.apply(n).getBytes(StandardCharsets.UTF_8);
            Request request = new Request.Builder().url(url)
                .header(HttpContract.IDEMPOTENCY_KEY,
                    HttpContract.toStructuredString(keyFor.apply(n)))
                .header(HttpContract.CONTENT_DIGEST, HttpContract.contentDigest(body))
                .post(RequestBody.create(body, JSON)).build();
            try (Response response = client.newCall(request).execute()) {
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
