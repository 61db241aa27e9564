package dev.outboxreplay;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a status line or a health check shows about one outbox, read at one moment ({@link
 * Replayer#health()}).
 *
 * @param counts rows per status, every status present (tombstones of ended commands included
 *     until they are deleted)
 * @param oldestOpenAcceptedAt when the oldest open command was accepted; empty when none is open
 *     or the store cannot tell cheaply
 * @param pausedReason why replay holds, when it does: {@link Reason#OFFLINE}, {@link
 *     Reason#SESSION_REVOKED} or {@link Reason#CREDENTIALS_REFUSED}
 * @param at when it was read, by the replayer's clock
 */
public record OutboxHealth(Map<Status, Long> counts, Optional<Instant> oldestOpenAcceptedAt,
    Optional<Reason> pausedReason, Instant at) {

  public OutboxHealth {
    counts = Map.copyOf(counts);
    Objects.requireNonNull(oldestOpenAcceptedAt, "oldestOpenAcceptedAt == null");
    Objects.requireNonNull(pausedReason, "pausedReason == null");
    Objects.requireNonNull(at, "at == null");
  }

  /** Commands not yet acked, conflict or rejected: still to be delivered. */
  public long open() {
    return Status.countOpen(counts);
  }

  /**
   * Commands that ended {@code conflict} or {@code rejected} and are still held (the user may
   * want to see them, and {@code requeue} one); they count until their tombstones are deleted.
   */
  public long needsAttention() {
    return counts.getOrDefault(Status.CONFLICT, 0L) + counts.getOrDefault(Status.REJECTED, 0L);
  }

  /** How long the oldest open command has waited at {@link #at()}; empty when none is open. */
  public Optional<Duration> oldestOpenAge() {
    return oldestOpenAcceptedAt.map(accepted -> {
      Duration age = Duration.between(accepted, at);
      return age.isNegative() ? Duration.ZERO : age;
    });
  }

  /** True when nothing is open, nothing needs attention and replay does not hold. */
  public boolean allDelivered() {
    return open() == 0 && needsAttention() == 0 && pausedReason.isEmpty();
  }
}
