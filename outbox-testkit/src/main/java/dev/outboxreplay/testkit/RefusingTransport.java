package dev.outboxreplay.testkit;

import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A receiver that refuses some commands for good (400, {@link TransportResult.Kind#REJECTED}) and
 * acks the others at once. Has no reconciliation endpoint. Thread-safe if {@code refuse} is.
 */
public final class RefusingTransport implements Transport {
  private final Predicate<OutboxRecord> refuse;

  private RefusingTransport(Predicate<OutboxRecord> refuse) {
    this.refuse = Objects.requireNonNull(refuse, "refuse == null");
  }

  /** Refuses the commands {@code refuse} matches, acks the rest. */
  public static RefusingTransport refusing(Predicate<OutboxRecord> refuse) {
    return new RefusingTransport(refuse);
  }

  @Override
  public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
    return refuse.test(command)
        ? TransportResult.of(TransportResult.Kind.REJECTED, new StoredResponse(400, new byte[0]),
            "400", "bad request")
        : TransportResult.of(TransportResult.Kind.ACKED, new StoredResponse(200, new byte[0]),
            "200", "ok");
  }

  /** No such endpoint. */
  @Override
  public Optional<Reconciliation> reconcile(OutboxRecord command,
      SessionRuntime.Snapshot session) {
    return Optional.empty();
  }
}
