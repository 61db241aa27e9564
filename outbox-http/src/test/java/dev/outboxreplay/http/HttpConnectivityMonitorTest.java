package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Real probes over loopback: a port that refuses, then a server that answers on it. */
class HttpConnectivityMonitorTest {
  @Test
  void reportsTheNetworkAvailableOnceTheReceiverAnswersAfterBeingDown() throws Exception {
    int port;
    try (ServerSocket probeFree = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probeFree.getLocalPort();
    }
    AtomicInteger available = new AtomicInteger();
    try (HttpConnectivityMonitor monitor = new HttpConnectivityMonitor(
        HttpUrl.get("http://127.0.0.1:" + port + "/"), Duration.ofMillis(20),
        Duration.ofMillis(200))) {
      monitor.start(available::incrementAndGet);
      Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
          .until(() -> available.get() == 0 && !monitor.reachable());
      try (MockWebServer server = new MockWebServer()) {
        for (int i = 0; i < 100; i++) {
          server.enqueue(new MockResponse.Builder().code(204).build());
        }
        server.start(InetAddress.getLoopbackAddress(), port);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> available.get() == 1);
        assertThat(monitor.reachable()).isTrue();
      }
    }
  }
}
