package dev.outboxreplay.http;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Behaves like a Django receiver behind django-idempotency-key 1.3.0 with its default settings,
 * as read from its code: a request without {@code Idempotency-Key} is 400; the stored key is the
 * SHA-256 of the header value exactly as received (quotes included), the path, the method and the
 * body, so the quoted and the bare form of one key are two keys; a repeat of a stored key gets the
 * stored response with its status replaced by 409 ({@code CONFLICT_STATUS_CODE}), never 422;
 * only 2xx responses are stored, so after any other the next request runs the view again; and
 * its lock timeout answers 423. It has no reconciliation endpoint: a GET is 404.
 *
 * <p>Scripted faults: {@link #lockedFor} answers 423 that many times for a key; {@link #failOnce}
 * makes the view answer 500 once; {@code cutAnswer} is asked after each effect and its response
 * are stored: true closes the connection without the answer.
 */
final class DjangoIdempotencyKeyPeer extends LoopbackPeer {
  private final BooleanSupplier cutAnswer;
  private final Map<String, String> stored = new HashMap<>();
  private final Map<String, Integer> locked = new HashMap<>();
  private final Map<String, Boolean> failOnce = new HashMap<>();

  DjangoIdempotencyKeyPeer(BooleanSupplier cutAnswer) throws IOException {
    this.cutAnswer = cutAnswer;
  }

  /** Requests with {@code keyHeader} find its lock taken {@code times} times: 423. */
  synchronized void lockedFor(String keyHeader, int times) {
    locked.put(keyHeader, times);
  }

  /** The view answers 500, without an effect, to the next request with {@code keyHeader}. */
  synchronized void failOnce(String keyHeader) {
    failOnce.put(keyHeader, true);
  }

  /** Stores a response for {@code keyHeader} on {@code path} with {@code body}, as a request did. */
  synchronized void alreadyUsed(String keyHeader, String path, byte[] body) {
    stored.put(encode(keyHeader, path, body), "{}");
  }

  @Override
  void handle(HttpExchange exchange, byte[] body) throws IOException {
    if (!exchange.getRequestMethod().equals("POST")) {
      answer(exchange, 404, "text/html", "<h1>Not Found</h1>");
      return;
    }
    String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
    if (key == null) {
      answer(exchange, 400, "application/json", "{\"detail\":\"Bad Request\"}");
      return;
    }
    String encoded = encode(key, exchange.getRequestURI().getPath(), body);
    synchronized (this) {
      int waits = locked.getOrDefault(key, 0);
      if (waits > 0) {
        locked.put(key, waits - 1);
        answer(exchange, 423, "application/json", "{\"detail\":\"Resource is locked\"}");
        return;
      }
      String previous = stored.get(encoded);
      if (previous != null) {
        answer(exchange, 409, "application/json", previous);
        return;
      }
      if (failOnce.remove(key) != null) {
        answer(exchange, 500, "text/html", "<h1>Server Error (500)</h1>");
        return;
      }
    }
    String response = applyEffect(key, body);
    synchronized (this) {
      stored.put(encoded, response);
    }
    if (cutAnswer.getAsBoolean()) {
      return;
    }
    answer(exchange, 201, "application/json", response);
  }

  /** The stored key: SHA-256 of the header as received, the path, the method and the body. */
  private static String encode(String keyHeader, String path, byte[] body) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(keyHeader.getBytes(StandardCharsets.UTF_8));
      sha.update(path.getBytes(StandardCharsets.UTF_8));
      sha.update("POST".getBytes(StandardCharsets.UTF_8));
      sha.update(body);
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
