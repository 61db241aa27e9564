package dev.outboxreplay.http;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * Clamps a {@code Retry-After} of more than {@link Integer#MAX_VALUE} seconds to that value,
 * before OkHttp's own follow-up logic reads the header: it parses digits as an {@code int} and
 * threw {@code NumberFormatException} out of the call for {@code Retry-After: 2147483648}, which
 * left the command unrecorded and resent every lease period. The clamped wait (68 years) means
 * the same to the retry policy, which caps any wait anyway. A network interceptor: it sees each
 * response before OkHttp's follow-up logic does.
 */
final class RetryAfterClamp implements Interceptor {
  static final RetryAfterClamp INSTANCE = new RetryAfterClamp();
  private static final String HEADER = "Retry-After";

  private RetryAfterClamp() {}

  @Override
  public Response intercept(Chain chain) throws IOException {
    Response response = chain.proceed(chain.request());
    String value = response.header(HEADER);
    if (value == null || !tooLargeForInt(value)) {
      return response;
    }
    return response.newBuilder().header(HEADER, Integer.toString(Integer.MAX_VALUE)).build();
  }

  /** True for a run of digits whose number does not fit an {@code int}. */
  static boolean tooLargeForInt(String value) {
    if (value.isEmpty()) {
      return false;
    }
    for (int i = 0; i < value.length(); i++) {
      if (value.charAt(i) < '0' || value.charAt(i) > '9') {
        return false;
      }
    }
    String digits = value.replaceFirst("^0+(?=.)", "");
    return digits.length() > 10 || Long.parseLong(digits) > Integer.MAX_VALUE;
  }
}
