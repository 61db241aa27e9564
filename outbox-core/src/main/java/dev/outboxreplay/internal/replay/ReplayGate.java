package dev.outboxreplay.internal.replay;

import dev.outboxreplay.Reason;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;

/**
 * Whether replay may send now: not while the session is revoked, its credentials were refused
 * (until they change), or a request could not leave (until the network is back, or the offline
 * back-off ends, whichever comes first). Thread-safe.
 */
public final class ReplayGate {
  private final SessionRuntime session;
  private final RetryPolicy retry;
  private final Clock clock;
  private boolean pausedForCredentials;
  private String refusedCredentials;
  private Instant offlineUntil;
  private boolean networkLost;
  private int offlineStreak;
  private Reason lastReported;

  public ReplayGate(SessionRuntime session, RetryPolicy retry, Clock clock) {
    this.session = session;
    this.retry = retry;
    this.clock = clock;
  }

  /** Why replay is paused now, or null when it may send. */
  public synchronized Reason paused() {
    SessionRuntime.Snapshot s = session.current();
    if (s.revoked()) {
      return Reason.SESSION_REVOKED;
    }
    if (pausedForCredentials) {
      if (!Objects.equals(refusedCredentials, s.credentials())) {
        pausedForCredentials = false; // the app has new credentials
      } else {
        return Reason.CREDENTIALS_REFUSED;
      }
    }
    if (networkLost || (offlineUntil != null && clock.instant().isBefore(offlineUntil))) {
      return Reason.OFFLINE;
    }
    if (offlineStreak == 0) {
      lastReported = null; // probing after an offline hold is still the same outage
    }
    return null;
  }

  /**
   * True the first time {@code reason} is seen since replay last ran unpaused (or since another
   * reason): the listener hears of a pause once, not on every pass it holds.
   */
  public synchronized boolean firstReport(Reason reason) {
    if (reason == lastReported) {
      return false;
    }
    lastReported = reason;
    return true;
  }

  /** The credentials {@code refusedUnder} carried were refused: pause until they change. */
  public synchronized void credentialsRefused(SessionRuntime.Snapshot refusedUnder) {
    refusedCredentials = refusedUnder.credentials();
    pausedForCredentials = true;
  }

  /** The app says it has fresh credentials. */
  public synchronized void credentialsRefreshed() {
    pausedForCredentials = false;
  }

  /**
   * A request could not leave: hold replay with the retry policy's back-off, longer each time in
   * a row, without spending any command's attempts.
   */
  public synchronized void wentOffline() {
    offlineStreak++;
    offlineUntil = retry.nextAttemptAt(offlineStreak, clock.instant(), null);
  }

  /** A request reached the receiver: the network works. */
  public synchronized void reachedReceiver() {
    offlineStreak = 0;
    offlineUntil = null;
  }

  /** The network is back (monitor or app): replay may try at once. */
  public synchronized void networkAvailable() {
    offlineUntil = null;
    networkLost = false;
  }

  /** The app says the network is gone: hold replay, without any request, until it is back. */
  public synchronized void networkLost() {
    networkLost = true;
  }

  /**
   * True after a request could not leave and before one reached the receiver again: a pass then
   * sends one request at a time, a probe, not one per sender.
   */
  public synchronized boolean probing() {
    return offlineStreak > 0;
  }

  /**
   * When the offline hold ends, or null when not holding or when holding until the app reports
   * the network back (then no timer is needed).
   */
  public synchronized Instant offlineUntil() {
    return networkLost ? null : offlineUntil;
  }
}
