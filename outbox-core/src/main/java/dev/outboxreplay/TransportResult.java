package dev.outboxreplay;

import java.time.Duration;
import java.util.Objects;

/**
 * One attempt's outcome as a {@link Transport} classifies it. The classification table is in
 * docs/guide.md ("How an attempt is classified"); the HTTP transport lets an application
 * override it per status code.
 *
 * @param kind what the attempt means for the command
 * @param response the server's answer, when there was one
 * @param retryAfter how long the server asked to wait ({@code Retry-After}), or null
 * @param errorCode a short stable code for the row's last error, e.g. {@code http_503}
 * @param message detail for humans
 */
public record TransportResult(Kind kind, StoredResponse response, Duration retryAfter,
    String errorCode, String message) {
  public TransportResult {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(errorCode, "errorCode");
  }

  /** What an attempt means. */
  public enum Kind {
    /** 2xx: the effect is confirmed. */
    ACKED,
    /**
     * Provably never left (connection refused, unknown host, no route): not an attempt, never
     * poisons; replay holds while offline.
     */
    NOT_SENT,
    /** The receiver answered that it did not take effect (5xx, 429, 408...): retry later. */
    RETRYABLE,
    /** May have taken effect (timeout or reset after the request was written): reconcile. */
    UNKNOWN,
    /** 409 in progress: the server is still processing this key; retry later, same key. */
    IN_PROGRESS,
    /**
     * The receiver refused the request because it has seen its key before, without giving its
     * stored answer (django-idempotency-key answers every repeat with 409 by default). On a
     * resend after an attempt that may have reached the receiver it means that attempt took
     * effect: acked without an answer ({@link Reason#ALREADY_APPLIED}). On a first attempt it
     * means another request used the key: a conflict. Never a default: a transport classifies a
     * status so only when told to.
     */
    KEY_ALREADY_USED,
    /** Business conflict (409) or key reused with another payload (422): terminal. */
    CONFLICT,
    /** Refused for good (other 4xx): terminal. */
    REJECTED,
    /** 401: the session's credentials were refused; replay pauses until they change. */
    UNAUTHORIZED,
    /**
     * 403: this command is forbidden (for example a permission revoked while offline). Ends
     * rejected with {@link Reason#FORBIDDEN} by default; see {@link ForbiddenPolicy}.
     */
    FORBIDDEN
  }

  public static TransportResult of(Kind kind, StoredResponse response, String errorCode,
      String message) {
    return new TransportResult(kind, response, null, errorCode, message);
  }
}
