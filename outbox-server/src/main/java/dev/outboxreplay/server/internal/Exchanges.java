package dev.outboxreplay.server.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;

/** Writing answers and RFC 9457 problem details on a JDK {@link HttpExchange}. */
public final class Exchanges {
  public static final ObjectMapper JSON = new ObjectMapper();
  /** Problem type of a 409 for a request whose key is still being processed. */
  public static final String IN_PROGRESS_TYPE = "urn:outbox:problem:request-in-progress";

  private Exchanges() {}

  public static void send(HttpExchange exchange, int status, String contentType, byte[] body,
      Map<String, String> headers) throws IOException {
    if (contentType != null) {
      exchange.getResponseHeaders().set("Content-Type", contentType);
    }
    headers.forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(status, body.length == 0 || head ? -1 : body.length);
    if (body.length > 0 && !head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
    exchange.close();
  }

  public static void problem(HttpExchange exchange, int status, String type, String title,
      String detail, Map<String, String> headers) throws IOException {
    ObjectNode problem = JSON.createObjectNode()
        .put("type", type).put("title", title).put("status", status).put("detail", detail);
    send(exchange, status, "application/problem+json", JSON.writeValueAsBytes(problem), headers);
  }

  public static void problem(HttpExchange exchange, int status, String title, String detail)
      throws IOException {
    problem(exchange, status, "about:blank", title, detail, Map.of());
  }

  /** Reads the body; null when it is longer than {@code limit} (the rest is not read). */
  public static byte[] readBody(HttpExchange exchange, int limit) throws IOException {
    String length = exchange.getRequestHeaders().getFirst("Content-Length");
    if (length != null) {
      try {
        if (Long.parseLong(length.strip()) > limit) {
          return null;
        }
      } catch (NumberFormatException e) {
        return null;
      }
    }
    try (InputStream in = exchange.getRequestBody()) {
      byte[] body = in.readNBytes(limit + 1);
      return body.length > limit ? null : body;
    }
  }
}
