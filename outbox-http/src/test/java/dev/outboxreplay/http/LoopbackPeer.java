package dev.outboxreplay.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The plumbing of a receiver written here to behave like one nobody here wrote: a JDK HTTP server
 * on loopback, the business effect (a payload's {@code seq} appended to its entity's arrival list,
 * counted per key), and the headers each request carried. Subclasses decide what a request means.
 */
abstract class LoopbackPeer implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer server;
  private final ExecutorService workers = Executors.newFixedThreadPool(8);
  private final Map<String, List<Long>> arrivals = new HashMap<>();
  private final Map<String, AtomicInteger> effects = new HashMap<>();
  private final List<String> keyHeaders = new ArrayList<>();
  final AtomicInteger requests = new AtomicInteger();

  LoopbackPeer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(workers);
    server.createContext("/", exchange -> {
      requests.incrementAndGet();
      try (exchange) {
        synchronized (this) {
          keyHeaders.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
        }
        handle(exchange, exchange.getRequestBody().readAllBytes());
      }
    });
    server.start();
  }

  /** Answers one request whose body is {@code body}; the exchange is closed afterwards. */
  abstract void handle(HttpExchange exchange, byte[] body) throws IOException;

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The business effect of {@code body} under {@code key}: its seq joins its entity's list. */
  final synchronized String applyEffect(String key, byte[] body) throws IOException {
    JsonNode doc = JSON.readTree(body);
    long seq = doc.path("seq").asLong();
    arrivals.computeIfAbsent(doc.path("entity").asText(), e -> new ArrayList<>()).add(seq);
    effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    return "{\"applied\":" + seq + "}";
  }

  synchronized List<Long> arrivalOrder(String entity) {
    return List.copyOf(arrivals.getOrDefault(entity, List.of()));
  }

  synchronized int effects(String key) {
    AtomicInteger n = effects.get(key);
    return n == null ? 0 : n.get();
  }

  synchronized int totalEffects() {
    return effects.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  /** Every {@code Idempotency-Key} header value received, in arrival order. */
  synchronized List<String> keyHeaders() {
    return List.copyOf(keyHeaders);
  }

  static void answer(HttpExchange exchange, int status, String contentType, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdownNow();
  }
}
