package dev.outboxreplay;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The wire contract between the outbox's HTTP transport and an idempotent receiver, shared by
 * {@code outbox-http} (client) and {@code outbox-server} (reference receiver).
 *
 * <p>A command is sent as {@code POST {base}/{operation}} with the stored canonical bytes as body
 * and these headers: {@value #IDEMPOTENCY_KEY} (an RFC 8941 String, quoted),
 * {@value #CONTENT_DIGEST} (RFC 9530, {@code sha-256=:<base64>:}), {@value #COMMAND_ID},
 * {@value #SESSION_VERSION} and, when the receiver is multi-tenant, {@value #TENANT}.
 *
 * <p>Reconciliation: {@code GET {base}}{@value #RECONCILE_PATH} with the same
 * {@value #IDEMPOTENCY_KEY} (and {@value #TENANT}) headers answers 200 with JSON
 * {@code {"status":"not_seen"}}, {@code {"status":"processing"}},
 * {@code {"status":"committed","response":{"status":201,"contentType":"...","bodyBase64":"..."}}}
 * or {@code {"status":"failed","error":"..."}}.
 */
public final class HttpContract {
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  public static final String CONTENT_DIGEST = "Content-Digest";
  public static final String COMMAND_ID = "Outbox-Command-Id";
  public static final String SESSION_VERSION = "Outbox-Session-Version";
  public static final String TENANT = "Outbox-Tenant";
  /** Set to {@code true} on a response replayed from the receiver's idempotency record. */
  public static final String REPLAYED = "Idempotent-Replayed";
  /** Path of the reconciliation endpoint, under the receiver's base URL. */
  public static final String RECONCILE_PATH = "/_outbox/reconcile";
  /** Tenant used when a request names none. */
  public static final String DEFAULT_TENANT = "default";

  private HttpContract() {}

  /**
   * The {@code status} field of a reconciliation answer, as both ends spell it on the wire.
   */
  public enum ReconcileStatus {
    /** The receiver holds no record of the key (never seen, or pruned after its retention). */
    NOT_SEEN("not_seen"),
    /** A request with the key is being processed now. */
    PROCESSING("processing"),
    /** The effect committed; the answer carries the stored response. */
    COMMITTED("committed"),
    /** The handler failed and nothing took effect; a retry with the same key runs again. */
    FAILED("failed");

    private final String wire;

    ReconcileStatus(String wire) {
      this.wire = wire;
    }

    /** The value of the {@code status} field. */
    public String wireName() {
      return wire;
    }

    /**
     * The status named {@code wire}.
     *
     * @throws IllegalArgumentException when no status has that wire name
     */
    public static ReconcileStatus ofWire(String wire) {
      for (ReconcileStatus s : values()) {
        if (s.wire.equals(wire)) {
          return s;
        }
      }
      throw new IllegalArgumentException("not a reconciliation status: " + wire);
    }
  }

  /**
   * Serializes {@code value} as an RFC 8941 sf-string: quoted, with {@code \} and {@code "}
   * escaped.
   *
   * @throws IllegalArgumentException when it has a character outside printable ASCII
   */
  public static String toStructuredString(String value) {
    StringBuilder out = new StringBuilder(value.length() + 2).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new IllegalArgumentException(String.format(
            "character U+%04X at index %d cannot be in an RFC 8941 string", (int) c, i));
      }
      if (c == '"' || c == '\\') {
        out.append('\\');
      }
      out.append(c);
    }
    return out.append('"').toString();
  }

  /**
   * Parses an RFC 8941 sf-string header value (surrounding spaces allowed).
   *
   * @throws IllegalArgumentException naming the problem when it is not exactly one sf-string
   */
  public static String parseStructuredString(String header) {
    String s = header.strip();
    if (s.length() < 2 || s.charAt(0) != '"') {
      throw new IllegalArgumentException("not an RFC 8941 string: it must be in double quotes");
    }
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\') {
        if (i + 1 >= s.length() || (s.charAt(i + 1) != '"' && s.charAt(i + 1) != '\\')) {
          throw new IllegalArgumentException("not an RFC 8941 string: bad escape at index " + i);
        }
        out.append(s.charAt(++i));
      } else if (c == '"') {
        if (i != s.length() - 1) {
          throw new IllegalArgumentException(
              "not an RFC 8941 string: characters after the closing quote");
        }
        return out.toString();
      } else if (c < 0x20 || c > 0x7e) {
        throw new IllegalArgumentException(String.format(
            "not an RFC 8941 string: character U+%04X at index %d", (int) c, i));
      } else {
        out.append(c);
      }
    }
    throw new IllegalArgumentException("not an RFC 8941 string: no closing quote");
  }

  /** The RFC 9530 {@code Content-Digest} value of {@code body}: {@code sha-256=:<base64>:}. */
  public static String contentDigest(byte[] body) {
    try {
      return contentDigestOf(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** The {@code Content-Digest} value for a body whose SHA-256 is already known. */
  public static String contentDigestOf(byte[] sha256) {
    return "sha-256=:" + Base64.getEncoder().encodeToString(sha256) + ":";
  }
}
