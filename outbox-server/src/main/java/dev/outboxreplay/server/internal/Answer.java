package dev.outboxreplay.server.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/**
 * What the receiver answers to one request, independent of the HTTP server: a status, a body
 * and headers, or {@link #dropped()} (close the connection without answering).
 *
 * @param committedHere true when this request's handler effect committed while answering it
 *     (not for a replayed answer or a refusal); fault injection acts only on those
 */
public record Answer(int status, String contentType, byte[] body, Map<String, String> headers,
    boolean committedHere, boolean dropConnection) {
  /** Shared JSON writer for problem documents and reconciliation answers. */
  public static final ObjectMapper JSON = new ObjectMapper();
  /** Problem type of a 409 for a request whose key is still being processed. */
  public static final String IN_PROGRESS_TYPE = "urn:outbox:problem:request-in-progress";

  public Answer {
    body = body == null ? new byte[0] : body;
    headers = Map.copyOf(headers);
  }

  /** An answer with {@code body} (not copied: answers are built and written once). */
  public static Answer of(int status, String contentType, byte[] body,
      Map<String, String> headers) {
    return new Answer(status, contentType, body, headers, false, false);
  }

  /** The answer of a request whose effect committed now. */
  public static Answer committed(int status, String contentType, byte[] body,
      Map<String, String> headers) {
    return new Answer(status, contentType, body, headers, true, false);
  }

  /** Close the connection without a status line. */
  public static Answer dropped() {
    return new Answer(0, null, null, Map.of(), false, true);
  }

  /** An RFC 9457 problem document with a fixed {@code detail}; never request bytes. */
  public static Answer problem(int status, String type, String title, String detail,
      Map<String, String> headers) {
    ObjectNode problem = JSON.createObjectNode()
        .put("type", type).put("title", title).put("status", status).put("detail", detail);
    try {
      return of(status, "application/problem+json", JSON.writeValueAsBytes(problem), headers);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write a problem document", e);
    }
  }

  /** A problem of type {@code about:blank}. */
  public static Answer problem(int status, String title, String detail) {
    return problem(status, "about:blank", title, detail, Map.of());
  }
}
