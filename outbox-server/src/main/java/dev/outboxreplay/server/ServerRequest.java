package dev.outboxreplay.server;

import java.util.Arrays;

/**
 * A validated request as a business handler sees it.
 *
 * @param tenant the tenant the key belongs to
 * @param operation the route's operation
 * @param idempotencyKey the parsed key
 * @param commandId the client's command id header, or null
 * @param sessionVersion the client's session version header, or null
 * @param body the request body
 */
public record ServerRequest(String tenant, String operation, String idempotencyKey,
    String commandId, String sessionVersion, byte[] body) {
  public ServerRequest {
    body = body.clone();
  }

  @Override
  public byte[] body() {
    return body.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ServerRequest r && tenant.equals(r.tenant) && operation.equals(r.operation)
        && idempotencyKey.equals(r.idempotencyKey) && Arrays.equals(body, r.body);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * tenant.hashCode() + idempotencyKey.hashCode()) + Arrays.hashCode(body);
  }
}
