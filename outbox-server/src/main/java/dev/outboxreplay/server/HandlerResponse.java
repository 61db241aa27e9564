package dev.outboxreplay.server;

/**
 * What a business handler answers. It is stored with the idempotency record in the same
 * transaction and replayed byte for byte to every repeat of the request.
 *
 * @param status HTTP status (2xx for an applied effect; a 4xx such as 409 or 422 for a business
 *     refusal, which is stored and replayed like any answer)
 * @param contentType the body's media type
 * @param body the body bytes
 */
public record HandlerResponse(int status, String contentType, byte[] body) {
  public HandlerResponse {
    if (status < 200 || status > 499) {
      throw new IllegalArgumentException("a handler answers 2xx-4xx, not " + status
          + "; throw to report a server failure");
    }
    body = body == null ? new byte[0] : body.clone();
  }

  @Override
  public byte[] body() {
    return body.clone();
  }

  /** A JSON answer. */
  public static HandlerResponse json(int status, String json) {
    return new HandlerResponse(status, "application/json",
        json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
