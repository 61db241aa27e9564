package dev.outboxreplay.examples.notes;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxHealth;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ReplayerBuilder;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.http.HttpConnectivityMonitor;
import dev.outboxreplay.http.OkHttpTransport;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import okhttp3.HttpUrl;

/** Replay for a desktop app: start, network and login events, a retry button, a status line. */
public final class NotesSync {
  private final OutboxStore<Connection> store;
  private final Replayer<Connection> replayer;

  public NotesSync(OutboxStore<Connection> store, HttpUrl baseUrl, SessionRuntime session,
      ResponseApplier<Connection> onAcked, List<OutboxListener> listeners, Settings settings) {
    this.store = store;
    ReplayerBuilder<Connection> builder = Replayer.builder(store,
            OkHttpTransport.builder(baseUrl).build())     // never resends on its own
        .session(session)                                 // tenant, version, logout, token
        .responseApplier(onAcked)                         // in the ack's transaction
        .retryPolicy(settings.retry())
        .lease(settings.lease())                          // longer than any one request
        .connectivityMonitor(new HttpConnectivityMonitor(baseUrl, settings.probeEvery(),
            settings.probeEvery().multipliedBy(10)));      // desktop JVMs have no network events
    listeners.forEach(builder::listener);                 // e.g. status line and metrics
    this.replayer = builder.build();
    replayer.start();              // recovers what a killed process left, then replays
  }

  /** After each saved edit (an accept inside the app's own transaction). */
  public void onAccepted() {
    replayer.onAccepted();
  }

  /** After login or a refreshed token: replay resumes at once. */
  public void onSignedIn() {
    replayer.onCredentialsRefreshed();
  }

  /** The retry button on a conflict or rejected edit; refused when a later edit was acked. */
  public OutboxRecord retry(CommandId id) {
    store.firstAckedAfter(id).ifPresent(later -> {
      throw new IllegalStateException("a later edit of " + later.entityKey()
          + " was delivered; retrying this one would overwrite it");
    });
    OutboxRecord queued = store.requeue(id, Instant.now());
    replayer.onAccepted();
    return queued;
  }

  /** Open, needing attention, paused and why: cheap enough for a status line. */
  public OutboxHealth health() {
    return replayer.health();
  }

  /** Never blocks the caller: completes once a request in flight has ended and been saved. */
  public CompletableFuture<Void> closeAsync() {
    return replayer.closeAsync();
  }

  /** Retry timing, lease and how often to look for the network. */
  public record Settings(RetryPolicy retry, Duration lease, Duration probeEvery) {
    public static Settings defaults() {
      return new Settings(RetryPolicy.builder().build(), Duration.ofSeconds(60),
          Duration.ofSeconds(1));
    }
  }
}
