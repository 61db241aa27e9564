package dev.outboxreplay.benchmarks;

import dev.outboxreplay.http.OkHttpClients;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;

/** Helpers shared by the benchmarks. */
final class BenchSupport {
  private BenchSupport() {}

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

  static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
