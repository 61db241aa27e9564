package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.RetryPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Retry-After in every form RFC 9110 allows, and the policy's cap on what it asks. */
class RetryAfterTest {
  /** Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example, minus 90 s. */
  static final Instant NOW = Instant.parse("1994-11-06T08:48:07Z");

  @Test
  void deltaSecondsAreReadAsTheyAre() {
    assertThat(RetryAfter.parse("120", NOW)).isEqualTo(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", NOW)).isEqualTo(Duration.ZERO);
  }

  @Test
  void eachOfTheThreeHttpDateFormsIsRead() {
    Duration in90s = Duration.ofSeconds(90);
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).as("IMF-fixdate")
        .isEqualTo(in90s);
    assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).as("RFC 850")
        .isEqualTo(in90s);
    assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW)).as("asctime")
        .isEqualTo(in90s);
  }

  @Test
  void anRfc850YearMoreThanFiftyYearsAheadIsTheLatestPastOne() {
    Instant in2026 = Instant.parse("2026-12-01T00:00:00Z");
    assertThat(RetryAfter.parse("Tuesday, 01-Dec-26 00:01:00 GMT", in2026))
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(RetryAfter.parse("Friday, 01-Dec-95 00:00:00 GMT", in2026))
        .as("1995, in the past").isEqualTo(Duration.ZERO);
  }

  @Test
  void aDateInThePastMeansNow() {
    assertThat(RetryAfter.parse("Sat, 05 Nov 1994 08:49:37 GMT", NOW)).isEqualTo(Duration.ZERO);
  }

  @Test
  void negativeAndUnreadableValuesAreIgnored() {
    for (String garbage : new String[] {"-5", "soon", "", "1.5", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "0x10"}) {
      assertThat(RetryAfter.parse(garbage, NOW)).as("'%s'", garbage).isNull();
    }
    assertThat(RetryAfter.parse(null, NOW)).isNull();
  }

  @Test
  void anAbsurdlyFarRetryAfterIsCappedByThePolicy() {
    Duration farAhead = RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", NOW);
    assertThat(farAhead).isGreaterThan(Duration.ofDays(365L * 8000));
    assertThat(RetryAfter.parse("99999999999999999999", NOW)).isGreaterThan(Duration.ofDays(1));
    RetryPolicy policy = RetryPolicy.builder().random(new SplittableRandom(1)).jitter(0)
        .initialInterval(Duration.ofSeconds(1)).maxInterval(Duration.ofMinutes(5)).build();
    assertThat(policy.nextAttemptAt(1, NOW, farAhead)).as("default cap: the max interval")
        .isEqualTo(NOW.plus(Duration.ofMinutes(5)));
    RetryPolicy capped = RetryPolicy.builder().random(new SplittableRandom(1)).jitter(0)
        .maxRetryAfter(Duration.ofHours(1)).build();
    assertThat(capped.nextAttemptAt(1, NOW, farAhead)).isEqualTo(NOW.plus(Duration.ofHours(1)));
    assertThat(capped.nextAttemptAt(1, NOW, Duration.ofSeconds(90)))
        .as("below the cap: honoured").isEqualTo(NOW.plusSeconds(90));
  }
}
