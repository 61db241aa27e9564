package dev.outboxreplay.benchmarks;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How many stalled connections the reference receiver, on its default limits, tolerates while
 * still answering a whole request within a second. Stalled kinds in equal numbers: a connection
 * that sends nothing, one that sends half a request line, one that sends a head and half its
 * body. For each count, the latency of fresh-connection requests is measured while they all
 * stay open; the baseline is the same request with none.
 */
final class StalledClientsProbe {
  private static final String BODY = "{\"body\":\"hi\",\"entity\":\"n\",\"seq\":1}";
  private final int[] counts;
  private final int requests;
  private int keys;

  StalledClientsProbe(int[] counts, int requests) {
    this.counts = counts.clone();
    this.requests = requests;
  }

  List<Figure> run() throws Exception {
    System.out.printf("stalled-clients probe: default limits (%d connections, head and body "
        + "within %d s, idle %d s, 16 request threads), %d requests per count%n",
        IdempotentServer.DEFAULT_MAX_CONNECTIONS,
        IdempotentServer.DEFAULT_REQUEST_READ_TIMEOUT.toSeconds(),
        IdempotentServer.DEFAULT_IDLE_TIMEOUT.toSeconds(), requests);
    Path dir = Files.createTempDirectory("stalled-probe");
    List<Figure> figures = new ArrayList<>();
    try (H2Database db = H2Database.open(dir.resolve("server"));
        IdempotentServer server = IdempotentServer.builder().database(db)
            .handler(NotesApplication.OPERATION, new NotesApplication(db).handler()).start()) {
      double[] none = latencies(server, 0);
      double baseline = BenchSupport.median(none);
      for (int count : counts) {
        double[] ms = latencies(server, count);
        System.out.printf("  %4d stalled: median %.1f ms, max %.1f ms (none stalled: %.1f ms)%n",
            count, BenchSupport.median(ms), max(ms), baseline);
        figures.add(Figure.below("slowest of " + requests + " answers (ms), " + count
            + " stalled connections", String.format(java.util.Locale.ROOT,
                "ms; median %.1f ms with none", baseline), new double[] {max(ms)}, 1000));
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
    return figures;
  }

  private double[] latencies(IdempotentServer server, int count) throws IOException {
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
        stalled.add(s);
        switch (i % 3) {
          case 0 -> { } // nothing
          case 1 -> s.getOutputStream().write(
              "POST /note.put HT".getBytes(StandardCharsets.US_ASCII));
          default -> s.getOutputStream().write((head("stalled-" + keys++) + BODY.substring(0, 10))
              .getBytes(StandardCharsets.US_ASCII));
        }
      }
      double[] ms = new double[requests];
      for (int r = 0; r < requests; r++) {
        long start = System.nanoTime();
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
          s.setSoTimeout(60_000);
          s.getOutputStream().write((head("probe-" + keys++) + BODY)
              .getBytes(StandardCharsets.US_ASCII));
          String status = statusLine(s.getInputStream());
          if (!status.startsWith("HTTP/1.1 201")) {
            throw new IOException("unexpected answer: " + status);
          }
        }
        ms[r] = (System.nanoTime() - start) / 1e6;
      }
      return ms;
    } finally {
      for (Socket s : stalled) {
        s.close();
      }
    }
  }

  private static String head(String key) {
    return "POST /" + NotesApplication.OPERATION + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Idempotency-Key: \"" + key + "\"\r\nContent-Type: application/json\r\n"
        + "Content-Length: " + BODY.length() + "\r\n\r\n";
  }

  private static String statusLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != -1 && b != '\r'; b = in.read()) {
      line.write(b);
    }
    return line.toString(StandardCharsets.US_ASCII);
  }

  private static double max(double[] values) {
    double m = 0;
    for (double v : values) {
      m = Math.max(m, v);
    }
    return m;
  }
}
