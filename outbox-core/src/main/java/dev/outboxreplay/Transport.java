package dev.outboxreplay;

import java.io.IOException;
import java.util.Optional;

/**
 * Sends commands to the receiver. Implementations (for example {@code outbox-http}
 * {@code OkHttpTransport}) never resend on their own: one call, at most one request on the wire.
 * Thread-safe.
 */
public interface Transport {
  /**
   * Sends {@code command} once with its stored bytes and key, under {@code session}, and
   * classifies what happened. Network failures are results, not exceptions.
   */
  TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session);

  /**
   * Asks the receiver what became of {@code command}'s key.
   *
   * @return empty when this transport or receiver has no reconciliation
   * @throws IOException when the receiver could not be asked
   */
  Optional<Reconciliation> reconcile(OutboxRecord command, SessionRuntime.Snapshot session)
      throws IOException;
}
