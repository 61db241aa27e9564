package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  private static final Instant NOW = Instant.parse("2026-05-01T12:00:00Z");

  private static RetryPolicy policy(long seed, double jitter) {
    return RetryPolicy.builder().random(new SplittableRandom(seed)).jitter(jitter)
        .initialInterval(Duration.ofSeconds(1)).multiplier(2).maxInterval(Duration.ofMinutes(1))
        .maxAttempts(5).maxAge(Duration.ofDays(1)).build();
  }

  @Test
  void withoutJitterTheDelayDoublesUpToTheCap() {
    RetryPolicy p = policy(1, 0);
    assertThat(p.nextAttemptAt(1, NOW, null)).isEqualTo(NOW.plusSeconds(1));
    assertThat(p.nextAttemptAt(2, NOW, null)).isEqualTo(NOW.plusSeconds(2));
    assertThat(p.nextAttemptAt(4, NOW, null)).isEqualTo(NOW.plusSeconds(8));
    assertThat(p.nextAttemptAt(30, NOW, null)).isEqualTo(NOW.plusSeconds(60));
  }

  @Test
  void jitterStaysWithinItsBandAndTheSameSeedReproducesTheSchedule() {
    RetryPolicy a = policy(42, 0.5);
    RetryPolicy b = policy(42, 0.5);
    for (int attempt = 1; attempt <= 10; attempt++) {
      Instant next = a.nextAttemptAt(attempt, NOW, null);
      assertThat(next).isEqualTo(b.nextAttemptAt(attempt, NOW, null));
      long base = Math.min(60_000, 1000L << (attempt - 1));
      long delay = next.toEpochMilli() - NOW.toEpochMilli();
      assertThat(delay).as("attempt %d", attempt)
          .isBetween(Math.round(base * 0.5), Math.min(60_000, Math.round(base * 1.5)));
    }
  }

  @Test
  void retryAfterIsALowerBound() {
    RetryPolicy p = policy(1, 0);
    assertThat(p.nextAttemptAt(1, NOW, Duration.ofSeconds(30))).isEqualTo(NOW.plusSeconds(30));
    assertThat(p.nextAttemptAt(10, NOW, Duration.ofSeconds(3))).isEqualTo(NOW.plusSeconds(60));
  }

  @Test
  void aRetryAfterLongerThanTheCapIsCutToIt() {
    RetryPolicy p = RetryPolicy.builder().random(new SplittableRandom(1)).jitter(0)
        .maxRetryAfter(Duration.ofMinutes(10)).build();
    assertThat(p.nextAttemptAt(1, NOW, Duration.ofDays(30))).isEqualTo(NOW.plusSeconds(600));
    assertThat(p.nextAttemptAt(1, NOW, Duration.ofSeconds(-5))).as("negative: ignored")
        .isEqualTo(NOW.plusSeconds(1));
  }

  @Test
  void badSettingsAreRefusedByName() {
    assertThatThrownBy(() -> RetryPolicy.builder().jitter(1.0)).hasMessageContaining("jitter");
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0))
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> RetryPolicy.builder().initialInterval(Duration.ofMinutes(5))
        .maxInterval(Duration.ofSeconds(1)).build()).hasMessageContaining("maxInterval");
    assertThatThrownBy(() -> RetryPolicy.builder().maxAge(Duration.ofDays(7))
        .keyRetention(Duration.ofDays(1)).build()).hasMessageContaining("keyRetention");
  }


  /** A generator whose every {@code nextDouble()} is {@code value} (exact for these values). */
  private static java.util.random.RandomGenerator always(double value) {
    long bits = (long) (value * 0x1.0p53) << 11;
    return () -> bits;
  }

  @Test
  void jitterScalesTheDelayByExactlyOneMinusToOnePlusJitter() {
    for (double[] c : new double[][] {{0.0, 500}, {0.5, 1_000}, {0.75, 1_250}}) {
      RetryPolicy p = RetryPolicy.builder().random(always(c[0])).jitter(0.5)
          .initialInterval(Duration.ofSeconds(1)).maxInterval(Duration.ofMinutes(1)).build();
      assertThat(p.nextAttemptAt(1, NOW, null)).as("random %s", c[0])
          .isEqualTo(NOW.plusMillis((long) c[1]));
    }
  }

  @Test
  void everyArgumentBoundaryIsTheDocumentedOne() {
    RetryPolicy.Builder b = RetryPolicy.builder();
    b.initialInterval(Duration.ofMillis(1)).maxInterval(Duration.ofMillis(1)).multiplier(1.0)
        .jitter(0).jitter(0.999);
    assertThat(b.build()).as("maxInterval equal to initialInterval").isNotNull();
    assertThatThrownBy(() -> b.initialInterval(Duration.ofNanos(999_999)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.maxInterval(Duration.ofNanos(999_999)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.multiplier(0.999)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.jitter(1.0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.jitter(-0.001)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryPolicy.builder().initialInterval(Duration.ofSeconds(2))
        .maxInterval(Duration.ofMillis(1_999)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryPolicy.builder().maxAge(Duration.ofDays(2))
        .keyRetention(Duration.ofDays(2)).build()).isInstanceOf(IllegalArgumentException.class);
    assertThat(RetryPolicy.builder().maxAge(Duration.ofDays(2))
        .keyRetention(Duration.ofDays(2).plusMillis(1)).build().maxRetryAfter())
        .as("maxRetryAfter defaults to maxInterval")
        .isEqualTo(RetryPolicy.DEFAULT_MAX_INTERVAL);
  }
}
