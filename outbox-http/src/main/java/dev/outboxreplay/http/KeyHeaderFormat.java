package dev.outboxreplay.http;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.IdempotencyKey;

/**
 * How the {@code Idempotency-Key} header carries the key. Receivers differ: the IETF draft makes
 * it an RFC 8941 string ({@code "note.put:n1:0190..."}, quotes included), while some receivers in
 * the wild compare or hash the header's raw bytes against a key they know without quotes. Either
 * way the same command always sends the same bytes, so a receiver's own deduplication holds.
 */
public enum KeyHeaderFormat {
  /** An RFC 8941 string, as the IETF draft defines the header: the default. */
  STRUCTURED_STRING,
  /**
   * The key's characters as they are, unquoted: for receivers that compare the raw header value
   * with a key they were given elsewhere (django-idempotency-key, express-idempotency hash or
   * look up the value as received). A key that starts or ends with a space cannot be sent so.
   */
  BARE;

  /**
   * The header value for {@code key}.
   *
   * @throws IllegalArgumentException when {@link #BARE} cannot carry the key unchanged
   */
  public String headerValue(IdempotencyKey key) {
    String value = key.value();
    if (this == STRUCTURED_STRING) {
      return HttpContract.toStructuredString(value);
    }
    if (value.startsWith(" ") || value.endsWith(" ")) {
      throw new IllegalArgumentException("a key that starts or ends with a space cannot be "
          + "sent as a bare header value (receivers strip it)");
    }
    return value;
  }
}
