package dev.outboxreplay.http;

import dev.outboxreplay.internal.Arguments;
import java.time.Duration;
import okhttp3.OkHttpClient;

/**
 * OkHttp clients configured so that OkHttp never resends on its own: by default it silently
 * retries POSTs after connection failures, follows redirects and 408s, which would make one
 * outbox attempt into several requests the outbox does not know about.
 */
public final class OkHttpClients {
  /** Default end-to-end limit of one call. */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(30);

  private OkHttpClients() {}

  /** A new client with the outbox's settings and {@code callTimeout}. */
  public static OkHttpClient create(Duration callTimeout) {
    return configure(new OkHttpClient.Builder(), callTimeout).build();
  }

  /**
   * Applies the outbox's settings to an application's own builder (keeping its interceptors,
   * TLS, proxy and so on): no retry on connection failure, no redirects, a call timeout, and a
   * {@code Retry-After} too large for OkHttp's own parsing clamped ({@link RetryAfterClamp}).
   */
  public static OkHttpClient.Builder configure(OkHttpClient.Builder builder, Duration callTimeout) {
    Arguments.positive("callTimeout", callTimeout);
    if (!builder.networkInterceptors().contains(RetryAfterClamp.INSTANCE)) {
      builder.addNetworkInterceptor(RetryAfterClamp.INSTANCE);
    }
    return builder
        .retryOnConnectionFailure(false)
        .followRedirects(false)
        .followSslRedirects(false)
        .callTimeout(callTimeout);
  }
}
