package dev.outboxreplay;

import java.util.Objects;

/**
 * The key the server deduplicates on: derived once at accept and sent unchanged on every attempt.
 * Printable ASCII (0x20-0x7E), 1 to {@value #MAX_LENGTH} characters, so it always fits an
 * RFC 8941 string header.
 *
 * @param value the key text
 */
public record IdempotencyKey(String value) {
  /** Longest key accepted, in characters. */
  public static final int MAX_LENGTH = 255;

  /**
   * @throws IllegalArgumentException when the key is empty, too long, or has a character outside
   *     printable ASCII (the message names the first offending position)
   */
  public IdempotencyKey {
    Objects.requireNonNull(value, "idempotency key == null");
    if (value.isEmpty()) {
      throw new IllegalArgumentException("idempotency key is empty");
    }
    if (value.length() > MAX_LENGTH) {
      throw new IllegalArgumentException("idempotency key is " + value.length()
          + " characters, more than " + MAX_LENGTH);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new IllegalArgumentException(String.format(
            "idempotency key has a non-printable or non-ASCII character U+%04X at index %d",
            (int) c, i));
      }
    }
  }

  @Override
  public String toString() {
    return value;
  }
}
