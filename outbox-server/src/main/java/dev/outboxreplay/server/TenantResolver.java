package dev.outboxreplay.server;

import dev.outboxreplay.HttpContract;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Decides which tenant a request acts for. Idempotency records, effects and reconciliation are
 * kept apart per tenant, so whoever can choose the tenant can read another tenant's stored
 * answers and replay its keys: in production the tenant must come from the request's
 * credentials, checked by the application. Thread-safe implementations only.
 */
@FunctionalInterface
public interface TenantResolver {
  /**
   * The tenant of an authenticated request.
   *
   * @param header a request header by name (case-insensitive), null when absent
   * @return the tenant (1-100 visible ASCII characters), or empty to refuse the request with 401
   */
  Optional<String> tenantOf(Function<String, String> header);

  /**
   * The default, and <b>unauthenticated</b>: the tenant is whatever the client's
   * {@code Outbox-Tenant} header says ({@code default} when absent). Anyone who can reach the
   * receiver can act for any tenant. For tests, demos and single-tenant receivers behind their own
   * authentication. {@link IdempotentServer} validates the header (400 when malformed).
   */
  TenantResolver TENANT_HEADER_UNAUTHENTICATED = header -> Optional.of(Objects.requireNonNullElse(
      header.apply(HttpContract.TENANT), HttpContract.DEFAULT_TENANT));

  /**
   * Bearer tokens ({@code Authorization: Bearer <token>}) mapped to tenants: a request without a
   * known token is refused with 401; the {@code Outbox-Tenant} header is then only checked
   * against the token's tenant (403 when it names another). Tokens are compared in constant time.
   */
  static TenantResolver bearerTokens(Map<String, String> tenantByToken) {
    List<Map.Entry<byte[], String>> tokens = tenantByToken.entrySet().stream()
        .map(e -> Map.entry(e.getKey().getBytes(StandardCharsets.UTF_8),
            Objects.requireNonNull(e.getValue(), "tenant")))
        .toList();
    return header -> {
      String authorization = header.apply("Authorization");
      if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
        return Optional.empty();
      }
      byte[] presented = authorization.substring(7).strip().getBytes(StandardCharsets.UTF_8);
      String tenant = null;
      for (Map.Entry<byte[], String> token : tokens) {
        if (MessageDigest.isEqual(token.getKey(), presented)) {
          tenant = token.getValue();
        }
      }
      return Optional.ofNullable(tenant);
    };
  }
}
