package dev.outboxreplay.http;

import dev.outboxreplay.ConnectivityMonitor;
import dev.outboxreplay.internal.Arguments;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The default connectivity monitor for desktop JVMs: a cheap {@code HEAD} of the receiver's base
 * URL. Any HTTP answer means "reachable"; a failure means "down". While down it probes with
 * exponential backoff (from {@code minInterval} up to {@code maxInterval}); when a probe succeeds
 * after a failure it reports the network as available, and when one fails after a success (or
 * the first one fails) it reports the network lost. While up it probes every
 * {@code maxInterval}. Thread-safe.
 */
public final class HttpConnectivityMonitor implements ConnectivityMonitor {
  private final OkHttpClient client;
  private final HttpUrl probe;
  private final Duration minInterval;
  private final Duration maxInterval;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
      r -> {
        Thread t = new Thread(r, "outbox-connectivity");
        t.setDaemon(true);
        return t;
      });
  private volatile Runnable onAvailable = () -> { };
  private volatile Runnable onLost = () -> { };
  private volatile boolean wasDown = true;
  private boolean reportedLost;
  private Duration nextDelay;

  public HttpConnectivityMonitor(HttpUrl baseUrl, Duration minInterval, Duration maxInterval) {
    this.client = OkHttpClients.create(Duration.ofSeconds(5));
    this.probe = Objects.requireNonNull(baseUrl, "baseUrl == null");
    this.minInterval = Arguments.positive("minInterval", minInterval);
    if (maxInterval.compareTo(minInterval) < 0) {
      throw new IllegalArgumentException("need 0 < minInterval <= maxInterval");
    }
    this.maxInterval = maxInterval;
    this.nextDelay = minInterval;
  }

  @Override
  public void start(Runnable onNetworkAvailable) {
    start(onNetworkAvailable, () -> { });
  }

  @Override
  public void start(Runnable onNetworkAvailable, Runnable onNetworkLost) {
    setOnAvailable(onNetworkAvailable);
    setOnLost(onNetworkLost);
    scheduler.execute(this::probeAndReschedule);
  }

  /** Sets what {@link #probeOnce()} calls when the receiver stops answering. */
  void setOnLost(Runnable onNetworkLost) {
    this.onLost = Objects.requireNonNull(onNetworkLost, "onNetworkLost == null");
  }

  /** Sets what {@link #probeOnce()} calls when the receiver answers after being down. */
  void setOnAvailable(Runnable onNetworkAvailable) {
    this.onAvailable = Objects.requireNonNull(onNetworkAvailable, "onNetworkAvailable == null");
  }

  /** True when the last probe got an HTTP answer. */
  public boolean reachable() {
    return !wasDown;
  }

  private void probeAndReschedule() {
    Duration delay = probeOnce();
    if (!scheduler.isShutdown()) {
      scheduler.schedule(this::probeAndReschedule, delay.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * One probe: reports the network available when it answers after being down, and returns how
   * long to wait before the next probe. Called on the monitor's thread (tests call it directly).
   */
  Duration probeOnce() {
    boolean up;
    try (Response ignored = client.newCall(new Request.Builder().url(probe).head().build())
        .execute()) {
      up = true;
    } catch (IOException e) {
      up = false;
    }
    if (up) {
      if (wasDown) {
        wasDown = false;
        reportedLost = false;
        onAvailable.run();
      }
      nextDelay = maxInterval;
    } else {
      nextDelay = wasDown ? min(nextDelay.multipliedBy(2), maxInterval) : minInterval;
      wasDown = true;
      if (!reportedLost) {
        reportedLost = true;
        onLost.run();
      }
    }
    return nextDelay;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}
