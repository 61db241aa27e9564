package dev.outboxreplay.micrometer;

import dev.outboxreplay.OutboxHealth;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Micrometer gauges of a replayer's {@link Replayer#health() health}, beside {@link
 * OutboxMetrics}:
 *
 * <ul>
 *   <li>{@code outbox.needs.attention} (gauge): commands that ended {@code conflict} or
 *       {@code rejected} and are still held ({@link OutboxHealth#needsAttention()}).
 *   <li>{@code outbox.replay.held} (gauge, tag {@code reason}: {@code offline},
 *       {@code session_revoked}, {@code credentials_refused}): 1 while replay holds for that
 *       reason, else 0. {@link OutboxMetrics}' counter of the same name counts the pauses; this
 *       gauge says whether one lasts.
 * </ul>
 *
 * The health is read at most once per {@code maxAge} (default 5 s), whatever the number of
 * gauges or scrapes. The gauges hold this binder, and so the replayer, strongly. Thread-safe.
 */
public final class ReplayerHealthMetrics implements MeterBinder {
  /** The reasons replay holds for: the tag values of {@code outbox.replay.held}. */
  private static final List<Reason> HOLDS =
      List.of(Reason.OFFLINE, Reason.SESSION_REVOKED, Reason.CREDENTIALS_REFUSED);

  private final ThrottledRead<OutboxHealth> health;

  private ReplayerHealthMetrics(Replayer<?> replayer, Clock clock, Duration maxAge) {
    Objects.requireNonNull(replayer, "replayer == null");
    this.health = new ThrottledRead<>(replayer::health, clock, maxAge);
  }

  /** Gauges of {@code replayer}'s health, read at most every 5 s by the system clock. */
  public static ReplayerHealthMetrics of(Replayer<?> replayer) {
    return of(replayer, Clock.systemUTC(), OutboxMetrics.DEFAULT_COUNTS_MAX_AGE);
  }

  /** Gauges of {@code replayer}'s health, read at most every {@code maxAge} by {@code clock}. */
  public static ReplayerHealthMetrics of(Replayer<?> replayer, Clock clock, Duration maxAge) {
    return new ReplayerHealthMetrics(replayer, clock, maxAge);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry == null");
    Gauge.builder("outbox.needs.attention", this, m -> m.health().needsAttention())
        .strongReference(true)
        .description("commands ended conflict or rejected that are still held")
        .register(registry);
    for (Reason reason : HOLDS) {
      Gauge.builder("outbox.replay.held", this,
              m -> m.health().pausedReason().filter(reason::equals).isPresent() ? 1 : 0)
          .tag("reason", reason.wireName()).strongReference(true)
          .description("1 while replay holds for this reason").register(registry);
    }
  }

  private OutboxHealth health() {
    return health.get();
  }
}
