package dev.outboxreplay.testkit.sim;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A {@link Transport} over a simulated network to a {@link SimulatedReceiver}. Each request's
 * fate comes from the schedule's {@link Choices}: lost on the way (the client sees a timeout),
 * held in the network and delivered later (reordered after the client gave up on it), answered
 * 503 or 429 without effect, delivered twice, or delivered with its answer lost after the
 * receiver committed. While offline nothing leaves. No sockets, no waiting. Driven by one
 * thread at a time (the replayer's sender, while the schedule's thread waits for its pass).
 */
public final class SimulatedNetwork implements Transport {
  private final SimulatedReceiver receiver;
  private final Choices choices;
  private final SimulationStats stats;
  private final List<OutboxRecord> held = new ArrayList<>();
  private volatile boolean offline;
  private volatile boolean perfect;
  private volatile FailureInjector failures = FailureInjector.NONE;
  private volatile Runnable meanwhile = () -> { };
  private int depth;

  SimulatedNetwork(SimulatedReceiver receiver, Choices choices, SimulationStats stats) {
    this.receiver = receiver;
    this.choices = choices;
    this.stats = stats;
  }

  void offline(boolean offline) {
    this.offline = offline;
  }

  boolean offline() {
    return offline;
  }

  /** From now on every request arrives once and every answer comes back. */
  void perfect() {
    this.perfect = true;
  }

  /** The failure injector of the life now running: it may crash after a request went out. */
  void failures(FailureInjector failures) {
    this.failures = failures;
  }

  /** Run at most once per request while it is in flight: another replayer's pass. */
  void meanwhile(Runnable meanwhile) {
    this.meanwhile = meanwhile;
  }

  /** Delivers requests held in the network, up to {@code count}, oldest first. */
  synchronized int deliverHeld(int count) {
    int delivered = 0;
    while (!held.isEmpty() && delivered < count) {
      receiver.deliver(held.remove(0));
      delivered++;
      stats.reordered++;
    }
    return delivered;
  }

  @Override
  public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
    if (offline) {
      stats.notSent++;
      return TransportResult.of(TransportResult.Kind.NOT_SENT, null, "offline",
          "simulated: no network");
    }
    boolean nest;
    synchronized (this) {
      nest = depth == 0 && !perfect && choices.chance(10);
      depth++;
    }
    try {
      if (nest && choices.chance(50)) {
        stats.interleaved++;
        meanwhile.run(); // another replayer runs while this request is on its way
      }
      int fate = perfect ? 99 : choices.pick(100);
      if (fate < 6) {
        stats.lostRequests++;
        return unknown("request lost");
      }
      if (fate < 11) {
        synchronized (this) {
          held.add(command);
        }
        stats.held++;
        return unknown("request held in the network");
      }
      if (fate < 16) {
        stats.refused++;
        if (choices.chance(50)) {
          return new TransportResult(TransportResult.Kind.RETRYABLE,
              new StoredResponse(429, new byte[0]), Duration.ofSeconds(1 + choices.pick(30)),
              "429", "simulated: too many requests");
        }
        return TransportResult.of(TransportResult.Kind.RETRYABLE,
            new StoredResponse(503, new byte[0]), "503", "simulated: unavailable");
      }
      TransportResult result = receiver.deliver(command);
      if (!perfect && choices.chance(8)) {
        receiver.deliver(command); // a duplicate on the wire
        stats.duplicated++;
      }
      failures.at(FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE);
      if (nest && !perfect) {
        stats.interleaved++;
        meanwhile.run(); // another replayer runs after the receiver committed
      }
      if (!perfect && choices.chance(10)) {
        stats.lostAnswers++;
        return unknown("answer lost after the receiver committed");
      }
      return result;
    } finally {
      synchronized (this) {
        depth--;
      }
    }
  }

  @Override
  public Optional<Reconciliation> reconcile(OutboxRecord command,
      SessionRuntime.Snapshot session) throws IOException {
    if (offline || (!perfect && choices.chance(10))) {
      throw new IOException("simulated: reconciliation request failed");
    }
    stats.reconciled++;
    return receiver.reconcile(command.idempotencyKey().value());
  }

  private static TransportResult unknown(String what) {
    return TransportResult.of(TransportResult.Kind.UNKNOWN, null, "timeout", "simulated: " + what);
  }
}
