package dev.outboxreplay.micrometer;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.ReceiveResult;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;

/**
 * Micrometer metrics of one inbox. Count each delivery through {@link #counted}:
 * {@code metrics.counted(inbox.receive(scope, id, bytes))}.
 *
 * <ul>
 *   <li>{@code inbox.receives} (counter, tag {@code outcome}): deliveries by outcome
 *       ({@code consumed}, {@code duplicate}, {@code duplicate_mismatch},
 *       {@code integrity_failure}).
 *   <li>{@code inbox.integrity.failures} and {@code inbox.mismatches} (gauges): messages in those
 *       states now; each read is one query, so scrape them at a modest rate. They hold the inbox
 *       strongly: they keep reporting when the application keeps no reference of its own.
 * </ul>
 *
 * Thread-safe.
 */
public final class InboxMetrics implements MeterBinder {
  private final Inbox<?> inbox;
  private volatile MeterRegistry registry;

  private InboxMetrics(Inbox<?> inbox) {
    this.inbox = Objects.requireNonNull(inbox, "inbox == null");
  }

  /** Metrics of {@code inbox}. */
  public static InboxMetrics of(Inbox<?> inbox) {
    return new InboxMetrics(inbox);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry == null");
    Gauge.builder("inbox.integrity.failures", inbox, i -> i.integrityFailures().size())
        .strongReference(true)
        .description("messages consumed whose staged result is missing").register(registry);
    Gauge.builder("inbox.mismatches", inbox, i -> i.mismatches().size())
        .strongReference(true)
        .description("message ids delivered again with other bytes").register(registry);
  }

  /** Counts {@code result} and returns it. */
  public ReceiveResult counted(ReceiveResult result) {
    MeterRegistry r = registry;
    if (r != null) {
      Counter.builder("inbox.receives")
          .tag("outcome", result.outcome().name().toLowerCase(java.util.Locale.ROOT))
          .register(r).increment();
    }
    return result;
  }
}
