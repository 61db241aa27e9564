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
  private static final Duration MIN = Duration.ofMillis(20);
  private static final Duration MAX = Duration.ofMillis(200);

  /** Probe by probe, no timer: the backoff while down and a single report when it answers. */
  @Test
  void probesBackOffWhileDownAndReportTheNetworkAvailableOnceWhenTheReceiverAnswers()
      throws Exception {
    int port = freePort();
    AtomicInteger available = new AtomicInteger();
    AtomicInteger lost = new AtomicInteger();
    try (HttpConnectivityMonitor monitor = new HttpConnectivityMonitor(url(port), MIN, MAX)) {
      monitor.setOnAvailable(available::incrementAndGet);
      monitor.setOnLost(lost::incrementAndGet);
      assertThat(monitor.probeOnce()).isEqualTo(Duration.ofMillis(40));
      assertThat(lost).as("the first failed probe reports the network lost").hasValue(1);
      assertThat(monitor.probeOnce()).isEqualTo(Duration.ofMillis(80));
      assertThat(monitor.probeOnce()).isEqualTo(Duration.ofMillis(160));
      assertThat(monitor.probeOnce()).as("capped").isEqualTo(MAX);
      assertThat(available.get()).isZero();
      assertThat(lost).as("once, not per probe").hasValue(1);
      assertThat(monitor.reachable()).isFalse();

      try (MockWebServer server = answering(port)) {
        assertThat(monitor.probeOnce()).as("while up: every maxInterval").isEqualTo(MAX);
        assertThat(available.get()).isEqualTo(1);
        assertThat(monitor.reachable()).isTrue();
        assertThat(monitor.probeOnce()).isEqualTo(MAX);
        assertThat(available.get()).as("reported once, not per probe").isEqualTo(1);
      }
      assertThat(monitor.probeOnce()).as("just went down: probe again soon").isEqualTo(MIN);
      assertThat(monitor.reachable()).isFalse();
      assertThat(lost).as("lost again after being up").hasValue(2);
    }
  }

  /** The timer-driven loop started by {@code start}, end to end. */
  @Test
  void reportsTheNetworkAvailableOnceTheReceiverAnswersAfterBeingDown() throws Exception {
    int port = freePort();
    AtomicInteger available = new AtomicInteger();
    try (HttpConnectivityMonitor monitor = new HttpConnectivityMonitor(url(port), MIN, MAX)) {
      monitor.start(available::incrementAndGet);
      try (MockWebServer server = answering(port)) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> available.get() == 1);
        assertThat(monitor.reachable()).isTrue();
      }
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket probeFree = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return probeFree.getLocalPort();
    }
  }

  private static HttpUrl url(int port) {
    return HttpUrl.get("http://127.0.0.1:" + port + "/");
  }

  private static MockWebServer answering(int port) throws Exception {
    MockWebServer server = new MockWebServer();
    for (int i = 0; i < 100; i++) {
      server.enqueue(new MockResponse.Builder().code(204).build());
    }
    server.start(InetAddress.getLoopbackAddress(), port);
    return server;
  }
}
