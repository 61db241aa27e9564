package dev.outboxreplay;

import java.time.Instant;
import java.util.Objects;

/**
 * The last error recorded on a row: a stable machine-readable code (for example {@code http_503},
 * {@code timeout_after_send}, {@code poison_max_attempts}), a human message, and when.
 *
 * @param code short stable code
 * @param message human-readable detail, may be empty
 * @param at when it was recorded
 */
public record ErrorInfo(String code, String message, Instant at) {
  /** Longest message kept; longer ones are cut so a store row stays bounded. */
  public static final int MAX_MESSAGE_LENGTH = 1000;

  public ErrorInfo {
    Objects.requireNonNull(code, "code == null");
    Objects.requireNonNull(at, "at == null");
    message = message == null ? "" : message;
    if (message.length() > MAX_MESSAGE_LENGTH) {
      message = message.substring(0, MAX_MESSAGE_LENGTH);
    }
  }
}
