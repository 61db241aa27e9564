package dev.outboxreplay.receiver;

import java.util.Objects;

/**
 * An answer as the receiver stores it with the request's effect and replays it to repeats, byte
 * for byte.
 *
 * @param status the HTTP status
 * @param contentType its content type, or null
 * @param body its body; never null (empty for none)
 */
public record StoredAnswer(int status, String contentType, byte[] body) {
  public StoredAnswer {
    Objects.requireNonNull(body, "body == null");
  }
}
