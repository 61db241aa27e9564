package dev.outboxreplay.benchmarks;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The cheapest receiver: a JDK {@code HttpServer} on loopback that reads each request and answers
 * 201 with a small JSON body, storing nothing. What is left of a replay against it is the
 * client's own cost.
 */
final class TrivialReceiver implements AutoCloseable {
  private static final byte[] ANSWER = "{\"applied\":true}".getBytes(StandardCharsets.UTF_8);
  private final HttpServer server;
  private final ExecutorService threads;

  private TrivialReceiver(HttpServer server, ExecutorService threads) {
    this.server = server;
    this.threads = threads;
  }

  /**
   * Starts one on an ephemeral port of 127.0.0.1 with {@code threads} request threads. Sets
   * {@code sun.net.httpserver.nodelay}: without it the JDK server's separate writes of headers
   * and body meet delayed acknowledgements, and every exchange waited about 40 ms (181 requests
   * a second from 8 senders, whoever sent them).
   */
  static TrivialReceiver start(int threads) throws IOException {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    HttpServer server = HttpServer.create(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    server.setExecutor(pool);
    server.createContext("/", TrivialReceiver::answer);
    server.start();
    return new TrivialReceiver(server, pool);
  }

  private static void answer(HttpExchange exchange) throws IOException {
    try (exchange; InputStream in = exchange.getRequestBody()) {
      in.readAllBytes();
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(201, ANSWER.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(ANSWER);
      }
    }
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
