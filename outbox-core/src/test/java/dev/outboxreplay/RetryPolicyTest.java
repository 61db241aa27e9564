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

}
