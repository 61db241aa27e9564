package dev.outboxreplay.micrometer;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OperatorRows;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Micrometer metrics of one outbox: bind it to a registry and pass it to the replayer as its
 * listener ({@code Replayer.builder(store, transport).listener(metrics)}).
 *
 * <ul>
 *   <li>{@code outbox.commands} (gauge, tag {@code status}): rows per status. The counts are read
 *       with one query and kept for {@code countsMaxAge} (default 5 s), whatever the number of
 *       gauges or scrapes.
 *   <li>{@code outbox.oldest.open.age} (gauge, seconds): how long ago the oldest command that is
 *       not yet acked, conflict or rejected was accepted; 0 when none is open.
 *   <li>{@code outbox.transitions} (counter, tags {@code from}, {@code to}, {@code reason}): every
 *       status change the replayer writes, with the reason the audit records.
 *   <li>{@code outbox.poisoned} (counter, tag {@code reason}) and {@code outbox.replay.paused}
 *       (counter, tag {@code reason}).
 *   <li>{@code outbox.attempt} (timer, tag {@code outcome}): from a row's change to
 *       {@code sending} to the status its attempt ended in, by the replayer's clock.
 *   <li>{@code outbox.pass} (timer, tag {@code idle}): each replay pass.
 * </ul>
 *
 * Tag values are the lower-case wire names of {@link Status} and {@link Reason}: a bounded set.
 * The gauges hold this binder strongly: they keep reporting when the application keeps no
 * reference of its own, and the registry keeps the binder and its store reachable until the
 * meters are removed. Thread-safe.
 */
public final class OutboxMetrics implements MeterBinder, OutboxListener {
  /** Default longest age of the status counts behind the gauges. */
  public static final Duration DEFAULT_COUNTS_MAX_AGE = Duration.ofSeconds(5);

  private final OperatorRows store;
  private final Clock clock;
  private final Map<CommandId, Instant> sendingSince = new ConcurrentHashMap<>();
  private volatile MeterRegistry registry;
  private final ThrottledRead<Map<Status, Long>> counts;

  private OutboxMetrics(OperatorRows store, Clock clock, Duration countsMaxAge) {
    this.store = Objects.requireNonNull(store, "store == null");
    this.clock = Objects.requireNonNull(clock, "clock == null");
    this.counts = new ThrottledRead<>(store::countByStatus, clock,
        Objects.requireNonNull(countsMaxAge, "countsMaxAge == null"));
  }

  /**
   * Metrics of {@code store} (an {@link dev.outboxreplay.OutboxStore}: the metrics read its
   * counts and oldest open command), with the system clock and {@link #DEFAULT_COUNTS_MAX_AGE}.
   */
  public static OutboxMetrics of(OperatorRows store) {
    return of(store, Clock.systemUTC(), DEFAULT_COUNTS_MAX_AGE);
  }

  /** Metrics of {@code store}; use the replayer's clock. */
  public static OutboxMetrics of(OperatorRows store, Clock clock, Duration countsMaxAge) {
    return new OutboxMetrics(store, clock, countsMaxAge);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry == null");
    for (Status status : Status.values()) {
      Gauge.builder("outbox.commands", this, m -> m.count(status))
          .tag("status", status.wireName()).strongReference(true)
          .description("outbox rows in this status").register(registry);
    }
    Gauge.builder("outbox.oldest.open.age", this, OutboxMetrics::oldestOpenAgeSeconds)
        .baseUnit("seconds").strongReference(true)
        .description("age of the oldest command not yet acked, conflict or rejected")
        .register(registry);
  }

  @Override
  public void onTransition(Transition t) {
    MeterRegistry r = registry;
    if (r == null) {
      return;
    }
    Counter.builder("outbox.transitions")
        .tag("from", t.from() == null ? "none" : t.from().wireName())
        .tag("to", t.to().wireName())
        .tag("reason", t.reason().wireName())
        .register(r).increment();
    if (t.to() == Status.SENDING) {
      sendingSince.put(t.commandId(), t.at());
    } else if (t.from() == Status.SENDING) {
      Instant since = sendingSince.remove(t.commandId());
      if (since != null) {
        Timer.builder("outbox.attempt").tag("outcome", t.to().wireName())
            .description("from sending to the status the attempt ended in")
            .register(r).record(Duration.between(since, t.at()));
      }
    }
  }

  @Override
  public void onPoison(OutboxRecord command, Reason reason) {
    MeterRegistry r = registry;
    if (r != null) {
      Counter.builder("outbox.poisoned").tag("reason", reason.wireName()).register(r)
          .increment();
    }
  }

  @Override
  public void onReplayPaused(Reason reason) {
    MeterRegistry r = registry;
    if (r != null) {
      Counter.builder("outbox.replay.paused").tag("reason", reason.wireName()).register(r)
          .increment();
    }
  }

  @Override
  public void onPassCompleted(PassSummary summary, Duration took) {
    MeterRegistry r = registry;
    if (r != null) {
      Timer.builder("outbox.pass").tag("idle", Boolean.toString(summary.idle()))
          .description("one replay pass").register(r).record(took);
    }
  }

  private double count(Status status) {
    return counts.get().getOrDefault(status, 0L);
  }

  private double oldestOpenAgeSeconds() {
    Optional<Instant> oldest = store.oldestOpenAcceptedAt();
    return oldest.map(at -> Math.max(0, Duration.between(at, clock.instant()).toMillis() / 1000.0))
        .orElse(0.0);
  }
}
