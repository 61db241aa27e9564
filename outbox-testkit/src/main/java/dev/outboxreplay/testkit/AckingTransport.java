package dev.outboxreplay.testkit;

import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A receiver that acks every command with an empty 200 and has no reconciliation endpoint, for
 * tests that exercise the replayer and the store rather than HTTP. Thread-safe when the hook is.
 */
public final class AckingTransport implements Transport {
  private final Consumer<OutboxRecord> beforeAnswer;

  private AckingTransport(Consumer<OutboxRecord> beforeAnswer) {
    this.beforeAnswer = Objects.requireNonNull(beforeAnswer, "beforeAnswer == null");
  }

  /** Acks at once. */
  public static AckingTransport acking() {
    return new AckingTransport(command -> { });
  }

  /** Runs {@code beforeAnswer} on each command (to advance a clock, count, or block) first. */
  public static AckingTransport acking(Consumer<OutboxRecord> beforeAnswer) {
    return new AckingTransport(beforeAnswer);
  }

  @Override
  public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
    beforeAnswer.accept(command);
    return TransportResult.of(TransportResult.Kind.ACKED, new StoredResponse(200, new byte[0]),
        "200", "ok");
  }

  /** No such endpoint: the engine resends an unknown command with its key. */
  @Override
  public Optional<Reconciliation> reconcile(OutboxRecord command,
      SessionRuntime.Snapshot session) {
    return Optional.empty();
  }
}
