package dev.outboxreplay.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Behaves like an Express receiver behind the npm package express-idempotency 1.0.6 with its
 * in-memory adapter, as read from its code: the key is the {@code Idempotency-Key} header exactly
 * as received; a repeat whose URL, method and parsed JSON body equal the first one's gets the
 * stored status, body and content type; a repeat whose first request has no stored response yet
 * gets 409 from Express's default error handler (an HTML page, not a problem document); a repeat
 * with another body gets 417; a response that is not 2xx is not stored and its key is forgotten,
 * so the next request with it runs the handler again. It has no reconciliation endpoint: a GET is
 * 404. A request without the header is processed without any deduplication.
 *
 * <p>Scripted faults: {@link #stillRunning} keeps a key "in progress" (its response not stored
 * yet) for that many repeats; {@link #failOnce} makes the handler answer 503 once for a key;
 * {@code cutAnswer} is asked after each effect and response are stored: true closes the
 * connection without the answer, as a proxy losing it would.
 */
final class ExpressIdempotencyPeer extends LoopbackPeer {
  private static final String HTML = "text/html; charset=utf-8";

  private final BooleanSupplier cutAnswer;
  private final Map<String, Resource> resources = new HashMap<>();
  private final Map<String, Integer> stillRunning = new HashMap<>();
  private final Set<String> failOnce = new HashSet<>();

  private static final class Resource {
    final String url;
    final JsonNode body;
    int status;
    String response;

    Resource(String url, JsonNode body) {
      this.url = url;
      this.body = body;
    }
  }

  ExpressIdempotencyPeer(BooleanSupplier cutAnswer) throws IOException {
    this.cutAnswer = cutAnswer;
  }

  /** The first request with {@code keyHeader} stays in progress for {@code repeats} repeats. */
  synchronized void stillRunning(String keyHeader, int repeats) {
    stillRunning.put(keyHeader, repeats);
  }

  /** The handler answers 503, without an effect, to the next request with {@code keyHeader}. */
  synchronized void failOnce(String keyHeader) {
    failOnce.add(keyHeader);
  }

  /** Stores {@code keyHeader} as used by an earlier request to {@code path} with {@code body}. */
  synchronized void alreadyUsed(String keyHeader, String path, String body) throws IOException {
    Resource r = new Resource(path, JSON.readTree(body));
    r.status = 201;
    r.response = "{}";
    resources.put(keyHeader, r);
  }

  @Override
  void handle(HttpExchange exchange, byte[] body) throws IOException {
    if (!exchange.getRequestMethod().equals("POST")) {
      answer(exchange, 404, HTML, "<pre>Cannot GET " + exchange.getRequestURI() + "</pre>");
      return;
    }
    String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
    String url = exchange.getRequestURI().toString();
    JsonNode parsed = JSON.readTree(body);
    Resource resource;
    synchronized (this) {
      Resource existing = key == null ? null : resources.get(key);
      if (existing != null) {
        if (!existing.url.equals(url) || !existing.body.equals(parsed)) {
          answer(exchange, 417, HTML, "<pre>Error: Misuse of the idempotency key. Please check "
              + "your request.</pre>");
          return;
        }
        int running = stillRunning.getOrDefault(key, 0);
        if (existing.response == null || running > 0) {
          stillRunning.put(key, running - 1);
          answer(exchange, 409, HTML, "<pre>Error: A previous request is still in progress for "
              + "this key.</pre>");
          return;
        }
        answer(exchange, existing.status, "application/json; charset=utf-8", existing.response);
        return;
      }
      resource = new Resource(url, parsed);
      if (key != null) {
        resources.put(key, resource);
      }
      if (key != null && failOnce.remove(key)) {
        resources.remove(key); // not 2xx: the key is forgotten
        answer(exchange, 503, HTML, "<pre>Service Unavailable</pre>");
        return;
      }
    }
    String response = applyEffect(key, body);
    synchronized (this) {
      resource.status = 201;
      resource.response = response;
    }
    if (cutAnswer.getAsBoolean()) {
      return;
    }
    answer(exchange, 201, "application/json; charset=utf-8", response);
  }
}
