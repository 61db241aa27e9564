package dev.outboxreplay;

import dev.outboxreplay.internal.Arguments;
import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * When to try again, and the limits after which the outcome policy gives up. The backoff curve
 * is Resilience4j's exponential {@link IntervalFunction} (initial interval times multiplier to
 * the power of the attempt, capped); jitter is applied here from an injected
 * {@link RandomGenerator}, because Resilience4j's own randomized intervals use
 * {@code Math.random()}, which a test cannot seed. A server's {@code Retry-After} is a lower
 * bound, itself capped at {@link Builder#maxRetryAfter}. The attempt count lives in the row, so
 * a restart continues the schedule. Only attempts that may have reached the receiver count; a
 * request that provably never left does not.
 *
 * <p>Immutable and thread-safe (given a thread-safe random source).
 */
public final class RetryPolicy {
  public static final Duration DEFAULT_INITIAL_INTERVAL = Duration.ofSeconds(1);
  public static final double DEFAULT_MULTIPLIER = 2.0;
  public static final Duration DEFAULT_MAX_INTERVAL = Duration.ofMinutes(5);
  public static final double DEFAULT_JITTER = 0.5;
  public static final int DEFAULT_MAX_ATTEMPTS = 20;
  /**
   * Counted from the first attempt that may have reached the receiver; shorter than
   * {@link #DEFAULT_KEY_RETENTION}, so a resend is still deduplicated.
   */
  public static final Duration DEFAULT_MAX_AGE = Duration.ofDays(3);
  /** The reference receiver's published key retention. Set your receiver's own. */
  public static final Duration DEFAULT_KEY_RETENTION = Duration.ofDays(7);

  private final IntervalFunction curve;
  private final Duration initialInterval;
  private final double multiplier;
  private final Duration maxInterval;
  private final double jitter;
  private final int maxAttempts;
  private final Duration maxAge;
  private final Duration keyRetention;
  private final Duration maxRetryAfter;
  private final RandomGenerator random;

  private RetryPolicy(Builder b) {
    this.initialInterval = b.initialInterval;
    this.multiplier = b.multiplier;
    this.maxInterval = b.maxInterval;
    this.jitter = b.jitter;
    this.maxAttempts = b.maxAttempts;
    this.maxAge = b.maxAge;
    this.keyRetention = b.keyRetention;
    this.maxRetryAfter = b.maxRetryAfter != null ? b.maxRetryAfter : b.maxInterval;
    this.random = b.random;
    this.curve = IntervalFunction.ofExponentialBackoff(initialInterval, multiplier, maxInterval);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The defaults, with {@code random} for jitter. */
  public static RetryPolicy defaults(RandomGenerator random) {
    return builder().random(random).build();
  }

  /**
   * When a command that has now failed {@code attempts} times may be tried again.
   *
   * @param retryAfter the server's {@code Retry-After}, or null; a lower bound, capped at
   *     {@link #maxRetryAfter()}
   */
  public Instant nextAttemptAt(int attempts, Instant now, Duration retryAfter) {
    long base = curve.apply(Math.max(1, attempts));
    double factor = 1 + jitter * (2 * random.nextDouble() - 1);
    long delay = Math.min(maxInterval.toMillis(), Math.round(base * factor));
    if (retryAfter != null && !retryAfter.isNegative()) {
      delay = Math.max(delay, Math.min(retryAfter.toMillis(), maxRetryAfter.toMillis()));
    }
    return now.plusMillis(Math.max(0, delay));
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration maxAge() {
    return maxAge;
  }

  /** How long the receiver keeps an idempotency key: past it, a resend may take effect twice. */
  public Duration keyRetention() {
    return keyRetention;
  }

  /** The longest {@code Retry-After} honoured. */
  public Duration maxRetryAfter() {
    return maxRetryAfter;
  }

  /** Configures a {@link RetryPolicy}; each setter validates its argument. */
  public static final class Builder {
    private Duration initialInterval = DEFAULT_INITIAL_INTERVAL;
    private double multiplier = DEFAULT_MULTIPLIER;
    private Duration maxInterval = DEFAULT_MAX_INTERVAL;
    private double jitter = DEFAULT_JITTER;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration maxAge = DEFAULT_MAX_AGE;
    private Duration keyRetention = DEFAULT_KEY_RETENTION;
    private Duration maxRetryAfter;
    private RandomGenerator random = new java.security.SecureRandom();

    private Builder() {}

    public Builder initialInterval(Duration initialInterval) {
      if (initialInterval.toMillis() < 1) {
        throw new IllegalArgumentException("initialInterval < 1 ms: " + initialInterval);
      }
      this.initialInterval = initialInterval;
      return this;
    }

    public Builder multiplier(double multiplier) {
      if (!(multiplier >= 1.0)) {
        throw new IllegalArgumentException("multiplier < 1: " + multiplier);
      }
      this.multiplier = multiplier;
      return this;
    }

    public Builder maxInterval(Duration maxInterval) {
      if (maxInterval.toMillis() < 1) {
        throw new IllegalArgumentException("maxInterval < 1 ms: " + maxInterval);
      }
      this.maxInterval = maxInterval;
      return this;
    }

    /** Relative jitter: each delay is scaled by a random factor in [1 - j, 1 + j]. */
    public Builder jitter(double jitter) {
      if (!(jitter >= 0 && jitter < 1)) {
        throw new IllegalArgumentException("jitter must be in [0, 1): " + jitter);
      }
      this.jitter = jitter;
      return this;
    }

    /**
     * Attempts known not to have taken effect after which a command ends rejected with
     * {@link Reason#POISON_MAX_ATTEMPTS}. A command whose outcome is unknown is never poisoned by
     * this: it is reconciled or resent with its key first. Default 20.
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = Arguments.atLeastOne("maxAttempts", maxAttempts);
      return this;
    }

    /**
     * How long after its first attempt that may have reached the receiver a command may still be
     * retried; never counted from accept, so time offline does not age a command. Default 3 days.
     */
    public Builder maxAge(Duration maxAge) {
      this.maxAge = Arguments.positive("maxAge", maxAge);
      return this;
    }

    /**
     * The receiver's key retention. An unknown outcome still unresolved when the next resend
     * would fall past it ends with {@link Reason#UNRESOLVED_KEY_EXPIRED}. Default 7 days.
     */
    public Builder keyRetention(Duration keyRetention) {
      this.keyRetention = Arguments.positive("keyRetention", keyRetention);
      return this;
    }

    /** The longest {@code Retry-After} honoured. Default: {@link #maxInterval}. */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = Arguments.positive("maxRetryAfter", maxRetryAfter);
      return this;
    }

    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random == null");
      return this;
    }

    public RetryPolicy build() {
      if (maxInterval.compareTo(initialInterval) < 0) {
        throw new IllegalArgumentException("maxInterval " + maxInterval
            + " < initialInterval " + initialInterval);
      }
      if (keyRetention.compareTo(maxAge) <= 0) {
        throw new IllegalArgumentException("keyRetention " + keyRetention
            + " <= maxAge " + maxAge + ": a resend must stay within the receiver's retention");
      }
      return new RetryPolicy(this);
    }
  }
}
