package dev.outboxreplay.internal.replay;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Transport;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;

/**
 * What every pass of one replayer shares: its parts, its settings and its sender threads.
 *
 * @param <T> the store's transaction handle
 */
public record ReplayEngine<T>(
    OutboxStore<T> store,
    Transport transport,
    SessionRuntime session,
    OutcomePolicy policy,
    Recorder<T> recorder,
    ReplayGate gate,
    OutboxListener listener,
    FailureInjector failures,
    Clock clock,
    String owner,
    Duration lease,
    int batchSize,
    int concurrency,
    ExecutorService senders) {

  /** Wires the recorder from the parts it needs. */
  public static <T> ReplayEngine<T> of(OutboxStore<T> store, Transport transport,
      SessionRuntime session, ResponseApplier<T> applier, OutcomePolicy policy, ReplayGate gate,
      OutboxListener listener, FailureInjector failures, Clock clock, String owner,
      Duration lease, int batchSize, int concurrency, ExecutorService senders) {
    return new ReplayEngine<>(store, transport, session, policy,
        new Recorder<>(store, applier, listener, policy), gate, listener, failures, clock, owner,
        lease, batchSize, concurrency, senders);
  }
}
