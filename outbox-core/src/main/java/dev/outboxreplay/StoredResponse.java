package dev.outboxreplay;

import java.util.Arrays;

/**
 * The server's answer kept on a finished row: HTTP status and body bytes.
 *
 * @param status the HTTP status code
 * @param body the response body; an empty array when there was none
 */
public record StoredResponse(int status, byte[] body) {
  public StoredResponse {
    body = body == null ? new byte[0] : body.clone();
  }

  @Override
  public byte[] body() {
    return body.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoredResponse other
        && status == other.status && Arrays.equals(body, other.body);
  }

  @Override
  public int hashCode() {
    return 31 * status + Arrays.hashCode(body);
  }

  @Override
  public String toString() {
    return "StoredResponse[status=" + status + ", " + body.length + " bytes]";
  }
}
