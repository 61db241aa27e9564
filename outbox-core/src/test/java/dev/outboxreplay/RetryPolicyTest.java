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
  void maxAttemptsAndMaxAgeNameThePoisonReason() {
    RetryPolicy p = policy(1, 0);
    OutboxRecord young = record(4, NOW.minusSeconds(10));
    assertThat(p.poisonReason(young, NOW)).isNull();
    assertThat(p.poisonReason(record(5, NOW), NOW)).isEqualTo("poison_max_attempts");
    assertThat(p.poisonReason(record(0, NOW.minus(Duration.ofDays(2))), NOW))
        .isEqualTo("poison_max_age");
  }

  @Test
  void badSettingsAreRefusedByName() {
    assertThatThrownBy(() -> RetryPolicy.builder().jitter(1.0)).hasMessageContaining("jitter");
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0))
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> RetryPolicy.builder().initialInterval(Duration.ofMinutes(5))
        .maxInterval(Duration.ofSeconds(1)).build()).hasMessageContaining("maxInterval");
  }

  private static OutboxRecord record(int attempt, Instant createdAt) {
    return new OutboxRecord(CommandId.parse("01890a5d-ac96-774b-bcce-b302099a8057"),
        new IdempotencyKey("k"), "op", "e", Payload.ofCanonicalBytes(new byte[] {'1'}),
        Status.RETRYABLE_FAILED, attempt, createdAt, null, null, 0, null, 0, null, null,
        createdAt, createdAt, 1, 1);
  }
}
