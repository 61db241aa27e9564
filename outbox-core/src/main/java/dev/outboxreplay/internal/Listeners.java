package dev.outboxreplay.internal;

import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link OutboxListener#all}: each event to each listener in order; one that throws is logged. */
public final class Listeners implements OutboxListener {
  private static final Logger LOG = LoggerFactory.getLogger(Listeners.class);

  private final List<OutboxListener> listeners;

  public Listeners(List<OutboxListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public void onTransition(Transition transition) {
    each(l -> l.onTransition(transition));
  }

  @Override
  public void onPoison(OutboxRecord command, Reason reason) {
    each(l -> l.onPoison(command, reason));
  }

  @Override
  public void onReplayPaused(Reason reason) {
    each(l -> l.onReplayPaused(reason));
  }

  @Override
  public void onPassCompleted(PassSummary summary, Duration took) {
    each(l -> l.onPassCompleted(summary, took));
  }

  private void each(Consumer<OutboxListener> event) {
    for (OutboxListener listener : listeners) {
      try {
        event.accept(listener);
      } catch (RuntimeException e) {
        LOG.warn("outbox listener {} threw; ignored, the other listeners were still called",
            listener, e);
      }
    }
  }

  @Override
  public String toString() {
    return "OutboxListener.all" + listeners;
  }
}
