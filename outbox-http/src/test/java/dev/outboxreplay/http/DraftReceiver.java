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
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A receiver that implements the IETF Idempotency-Key draft and nothing of this project: no
 * reconciliation endpoint (any other route is 404), no project headers read. A first request is
 * processed and its response stored; a repeat after completion gets the stored response; the same
 * key with another payload gets 422; the same key while the first is in progress gets 409 with the
 * draft's example problem type; a missing key gets 400. Processing appends the payload's
 * {@code seq} to its entity's arrival list, once per key.
 *
 * <p>{@code cutResponse} is asked after each commit: true closes the connection without an answer,
 * as a network that loses the response would.
 */
final class DraftReceiver implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer server;
  private final ExecutorService workers = Executors.newFixedThreadPool(8);
  private final BooleanSupplier cutResponse;
  private final Map<String, Entry> keys = new HashMap<>();
  private final Map<String, List<Long>> arrivals = new HashMap<>();
  private final Map<String, AtomicInteger> effects = new HashMap<>();
  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger notFound = new AtomicInteger();

  private static final class Entry {
    final byte[] hash;
    int status;
    byte[] body;

    Entry(byte[] hash) {
      this.hash = hash;
    }
  }

  DraftReceiver(BooleanSupplier cutResponse) throws IOException {
    this.cutResponse = cutResponse;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(workers);
    server.createContext("/", this::handle);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange exchange) throws IOException {
    requests.incrementAndGet();
    try (exchange) {
      if (!exchange.getRequestMethod().equals("POST")) {
        notFound.incrementAndGet();
        answer(exchange, 404, "{\"title\":\"Not Found\"}");
        return;
      }
      byte[] body = exchange.getRequestBody().readAllBytes();
      String header = exchange.getRequestHeaders().getFirst("Idempotency-Key");
      if (header == null || header.length() < 2 || !header.startsWith("\"")) {
        answer(exchange, 400, problem("https://example.com/idempotency/missing-key"));
        return;
      }
      String key = header.substring(1, header.length() - 1);
      byte[] hash = sha256(body);
      Entry entry;
      synchronized (this) {
        Entry existing = keys.get(key);
        if (existing != null) {
          if (!Arrays.equals(existing.hash, hash)) {
            answer(exchange, 422, problem("https://example.com/idempotency/key-reuse"));
          } else if (existing.body == null) {
            answer(exchange, 409, problem("https://example.com/idempotency/concurrent-request"));
          } else {
            answer(exchange, existing.status, new String(existing.body, StandardCharsets.UTF_8));
          }
          return;
        }
        entry = new Entry(hash);
        keys.put(key, entry);
      }
      JsonNode doc = JSON.readTree(body);
      String entity = doc.path("entity").asText();
      String response = "{\"applied\":" + doc.path("seq").asLong() + "}";
      synchronized (this) { // the business effect and the stored response commit together
        arrivals.computeIfAbsent(entity, e -> new ArrayList<>()).add(doc.path("seq").asLong());
        effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        entry.status = 201;
        entry.body = response.getBytes(StandardCharsets.UTF_8);
      }
      if (cutResponse.getAsBoolean()) {
        return; // closed without an answer, after the commit
      }
      answer(exchange, 201, response);
    }
  }

  synchronized List<Long> arrivalOrder(String entity) {
    return List.copyOf(arrivals.getOrDefault(entity, List.of()));
  }

  synchronized int effects(String key) {
    AtomicInteger n = effects.get(key);
    return n == null ? 0 : n.get();
  }

  synchronized long keysAppliedMoreThanOnce() {
    return effects.values().stream().filter(n -> n.get() > 1).count();
  }

  private static String problem(String type) {
    return "{\"type\":\"" + type + "\"}";
  }

  private static void answer(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static byte[] sha256(byte[] body) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(body);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdownNow();
  }
}
