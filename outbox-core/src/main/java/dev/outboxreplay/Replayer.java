package dev.outboxreplay;

import dev.outboxreplay.internal.replay.OutcomePolicy;
import dev.outboxreplay.internal.replay.ReplayEngine;
import dev.outboxreplay.internal.replay.ReplayGate;
import dev.outboxreplay.internal.replay.ReplayPass;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends an outbox's commands until each ends acked, conflict or rejected. A pass recovers expired
 * leases, claims due rows under a lease (at most one per entity, in accept order), reconciles rows
 * whose last attempt may have reached the receiver (or resends them with the same key), sends the
 * rest with bounded concurrency, and records each outcome with the claim's fencing token. What an
 * outcome means is decided in one place (see {@code docs/failure-points.md}); a confirmed answer is
 * applied by the {@link ResponseApplier} in the transaction that marks the row acked, only if the
 * session fence admits it, and always on the pass thread: the applier never runs concurrently with
 * itself.
 *
 * <p>Triggers: {@link #start()} (recovery, then a pass), {@link #onNetworkAvailable()} and the
 * {@link ConnectivityMonitor}, {@link #onAccepted()}, a timer for the next due retry, and, while
 * nothing is due, a look every {@link ReplayerBuilder#idleLookInterval} for commands other
 * processes accepted. They coalesce into single-flight passes. A pass that fails (the store
 * failed) is tried again after 250 ms, doubling up to 1 s while the failure is {@linkplain
 * OutboxStorageException#retryable() retryable}, 30 s otherwise. While offline (a request could
 * not leave) replay holds with back-off and spends no attempts; network-up resumes it at once.
 * Several replayers (threads or processes sharing the file) may run at once: leases and fencing
 * tokens keep them apart.
 *
 * <p>Threads: one daemon pass thread and {@code concurrency} daemon sender threads that do network
 * I/O only. {@link #close()} never interrupts a thread while it touches the database.
 *
 * <p>Thread-safe.
 *
 * @param <T> the store's transaction handle
 */
public final class Replayer<T> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Replayer.class);
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(30);
  /** How often a waiter looks at the store again when no pass of this replayer wakes it. */
  private static final long RECHECK_MILLIS = 200;
  /**
   * First wait before a pass that failed is tried again; it doubles per further failure, up to
   * 1 s while the store says the failure passes (a handover of the shared file), 30 s otherwise.
   */
  static final Duration FAILED_PASS_FIRST_RETRY = Duration.ofMillis(250);
  /** How often a pass also prunes the audit and applies the history retention. */
  static final Duration HISTORY_UPKEEP_INTERVAL = Duration.ofHours(1);
  static final Duration FAILED_PASS_LONGEST_RETRY = Duration.ofSeconds(30);
  static final Duration RETRYABLE_PASS_LONGEST_RETRY = Duration.ofSeconds(1);

  private final ReplayEngine<T> engine;
  private final ReplayGate gate;
  private final OutboxStore<T> store;
  private final ConnectivityMonitor connectivity;
  private final OutboxListener listener;
  private final Clock clock;
  private final Duration holdInterval;
  private final Duration auditRetention;
  private final Duration tombstoneAfter;
  private final Duration deleteTombstonesAfter;
  private final Duration idleLookInterval;
  private final ExecutorService senders;
  private final ScheduledExecutorService scheduler;
  private final AtomicBoolean passQueued = new AtomicBoolean();
  private final Object passLock = new Object();
  private final Object progress = new Object();
  private volatile boolean started;
  private volatile boolean closed;
  private ScheduledFuture<?> timer;
  private Instant lastHistoryUpkeep = Instant.EPOCH;
  /** Passes that failed in a row, and whether the last failure passes; pass thread only. */
  private int failedPasses;
  private boolean lastFailureRetryable;

  Replayer(ReplayerBuilder<T> b) {
    this.store = b.store;
    this.clock = b.clock;
    this.connectivity = b.connectivity;
    this.listener = OutboxListener.all(b.listeners);
    this.holdInterval = b.holdInterval;
    this.auditRetention = b.auditRetention;
    this.tombstoneAfter = b.tombstoneAfter;
    this.deleteTombstonesAfter = b.deleteTombstonesAfter;
    this.idleLookInterval = b.idleLookInterval;
    this.gate = new ReplayGate(b.session, b.retry, b.clock);
    this.senders = Executors.newFixedThreadPool(b.concurrency, daemon("outbox-sender-" + b.owner));
    ScheduledThreadPoolExecutor passThread = new ScheduledThreadPoolExecutor(1,
        daemon("outbox-replayer-" + b.owner));
    passThread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.scheduler = passThread;
    this.engine = ReplayEngine.of(b.store, b.transport, b.session, b.applier,
        new OutcomePolicy(b.retry, b.holdInterval, b.stalePolicy, b.forbiddenPolicy), gate,
        listener, b.failures, b.clock, b.owner, b.lease, b.batchSize, b.concurrency, senders);
  }

  /** A builder; the store and the transport are required. */
  public static <T> ReplayerBuilder<T> builder(OutboxStore<T> store, Transport transport) {
    return new ReplayerBuilder<>(store, transport);
  }

  /** Starts the connectivity monitor and requests a first pass (which begins with recovery). */
  public void start() {
    started = true;
    connectivity.start(this::onNetworkAvailable, this::onNetworkLost);
    requestPass();
  }

  /** The network is back: end any offline hold and replay now. */
  public void onNetworkAvailable() {
    gate.networkAvailable();
    requestPass();
  }

  /**
   * The network is gone (from the app's own network callback): replay holds without making any
   * request, and so without spending attempts, until {@link #onNetworkAvailable()}.
   */
  public void onNetworkLost() {
    gate.networkLost();
  }

  /** A command was accepted (and its transaction committed): replay now. */
  public void onAccepted() {
    requestPass();
  }

  /** The app has fresh credentials after a 401: resume and replay now. */
  public void onCredentialsRefreshed() {
    gate.credentialsRefreshed();
    requestPass();
  }

  /** Asks for a pass on the replayer's thread; requests made while one is queued coalesce. */
  public void requestPass() {
    if (closed || !passQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      scheduler.execute(() -> {
        passQueued.set(false);
        boolean failed = true;
        try {
          runPass();
          failed = false;
        } catch (RuntimeException e) {
          lastFailureRetryable = e instanceof OutboxStorageException s && s.retryable();
          LOG.warn("replay pass failed; retried in {} or at the next trigger",
              failedPassRetry(failedPasses + 1, lastFailureRetryable), e);
        } finally {
          failedPasses = failed ? failedPasses + 1 : 0;
          scheduleNext();
        }
      });
    } catch (RejectedExecutionException closing) {
      passQueued.set(false);
    }
  }

  /**
   * Runs one pass on the calling thread and returns what it did. Passes of one replayer never
   * overlap; the calling thread does every write of the pass.
   */
  public PassSummary runPass() {
    try {
      synchronized (passLock) {
        long started = System.nanoTime();
        PassSummary summary = new ReplayPass<>(engine, () -> closed).run();
        keepHistoryNowAndThen();
        try {
          listener.onPassCompleted(summary, Duration.ofNanos(System.nanoTime() - started));
        } catch (RuntimeException e) {
          LOG.warn("the listener failed on a completed pass", e);
        }
        return summary;
      }
    } finally {
      synchronized (progress) {
        progress.notifyAll();
      }
    }
  }

  /**
   * Waits until no command of the outbox is open (every one acked, conflict or rejected), or
   * {@code timeout} passes. Passes are this replayer's to run: {@link #start()} it first (a
   * started replayer then also asks for a pass every 200 ms while someone waits, to notice what
   * other processes sharing the file finished), or call {@link #runPass()} from another thread.
   * Commands accepted meanwhile count too.
   *
   * @return true when drained, false on timeout
   * @throws InterruptedException when the waiting thread is interrupted
   * @throws OutboxStorageException when the store fails for good, or a passing failure lasts to
   *     the timeout
   */
  public boolean awaitDrained(Duration timeout) throws InterruptedException {
    return awaitUntil(timeout, () -> store.nextDueAt().isEmpty()
        && Status.countOpen(store.countByStatus()) == 0 ? Optional.of(true) : Optional.empty())
        .isPresent();
  }

  /**
   * The outbox's health now, for a status line or a health check: open commands, the oldest
   * one's age, why replay holds (if it does) and how many ended commands need the user's
   * attention. Reads the store (two cheap queries); any thread, also before {@link #start()}.
   *
   * @throws OutboxStorageException when the store cannot be read
   */
  public OutboxHealth health() {
    Map<Status, Long> counts = store.countByStatus();
    Optional<Instant> oldest = Status.countOpen(counts) == 0 ? Optional.empty()
        : store.oldestOpenAcceptedAt();
    return new OutboxHealth(counts, oldest, Optional.ofNullable(gate.paused()), clock.instant());
  }

  /**
   * Waits until command {@code id} is acked, conflict or rejected, or {@code timeout} passes.
   *
   * @return the terminal row, or empty on timeout
   * @throws NoSuchElementException when the outbox holds no such command
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public Optional<OutboxRecord> awaitTerminal(CommandId id, Duration timeout)
      throws InterruptedException {
    return awaitUntil(timeout, () -> {
      OutboxRecord r = store.find(id)
          .orElseThrow(() -> new NoSuchElementException("no outbox command " + id));
      return r.status().isTerminal() ? Optional.of(r) : Optional.empty();
    });
  }

  private <R> Optional<R> awaitUntil(Duration timeout, Supplier<Optional<R>> check)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<R> done;
      try {
        done = check.get();
      } catch (OutboxStorageException e) {
        if (!e.retryable() || deadline - System.nanoTime() <= 0) {
          throw e;
        }
        done = Optional.empty(); // a passing store failure: look again, as the pass does
      }
      long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (done.isPresent() || leftMillis <= 0) {
        return done;
      }
      synchronized (progress) {
        progress.wait(Math.min(leftMillis, RECHECK_MILLIS));
      }
      if (started) {
        requestPass(); // coalesces with a pass already queued; an offline hold still holds
      }
    }
  }

  /** No pass starts from now on: new triggers are ignored and the retry timer is cancelled. */
  private void stopTriggers() {
    closed = true;
    synchronized (this) {
      if (timer != null) {
        timer.cancel(false);
      }
    }
  }

  /**
   * Starts {@link #close()} on a thread of its own and returns at once, for a UI thread that must
   * not wait for a request in flight (close can wait up to 30 s for the running pass and as long
   * again for its senders). When this returns no new pass starts; the future completes when
   * {@code close()} has returned: the running pass ended and the senders stopped. Rows a pass
   * did not finish stay durable and their leases expire as after a kill. Calling it again, or
   * {@code close()}, after it is harmless.
   *
   * @return completes normally once closed; never completes exceptionally
   */
  public CompletableFuture<Void> closeAsync() {
    stopTriggers();
    CompletableFuture<Void> done = new CompletableFuture<>();
    Thread closer = new Thread(() -> {
      try {
        close();
      } catch (RuntimeException e) {
        LOG.warn("closing the replayer failed", e);
      } finally {
        done.complete(null);
      }
    }, "outbox-replayer-close");
    closer.setDaemon(true);
    closer.start();
    return done;
  }

  /**
   * Stops triggers and timers, lets a running pass finish its sends in flight (up to 30 s) and
   * record them, and never interrupts a thread that touches the database. Unfinished rows keep
   * their lease and are recovered by whoever claims next. Idempotent.
   */
  @Override
  public void close() {
    stopTriggers();
    connectivity.close();
    scheduler.shutdown();
    try {
      if (!scheduler.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warn("the replay pass did not end within {}; left running", CLOSE_WAIT);
      }
      senders.shutdown(); // after the pass: it hands no more requests to them
      if (!senders.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        senders.shutdownNow(); // senders do network I/O only: safe to interrupt
      }
    } catch (InterruptedException e) {
      senders.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The next timer: the next due row, but not before an offline hold ends, and only every hold
   * interval while the session is paused, so nothing spins.
   */
  private void scheduleNext() {
    if (closed) {
      return;
    }
    Instant now = clock.instant();
    Optional<Instant> due;
    if (failedPasses > 0) {
      // The store failed (for example while another process takes the shared file over): try
      // again soon, with back-off, rather than waiting for a trigger that may never come.
      due = Optional.of(now.plus(failedPassRetry(failedPasses, lastFailureRetryable)));
    } else {
      try {
        Reason paused = gate.paused();
        due = paused == null ? store.nextDueAt()
            : paused == Reason.OFFLINE ? Optional.ofNullable(gate.offlineUntil())
            : Optional.of(now.plus(holdInterval));
        if (paused == null && started && !idleLookInterval.isZero()) {
          // other processes sharing the file accept too: look again now and then
          Instant look = now.plus(idleLookInterval);
          due = Optional.of(due.filter(d -> d.isBefore(look)).orElse(look));
        }
      } catch (RuntimeException e) {
        LOG.warn("could not read when the next command is due; looking again in {}",
            FAILED_PASS_FIRST_RETRY, e);
        due = Optional.of(now.plus(FAILED_PASS_FIRST_RETRY));
      }
    }
    synchronized (this) {
      if (timer != null) {
        timer.cancel(false);
      }
      if (due.isPresent() && !closed) {
        long delay = Math.max(10, Duration.between(now, due.get()).toMillis());
        try {
          timer = scheduler.schedule(this::requestPass, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
          timer = null;
        }
      }
    }
  }

  /** 250 ms, doubling per further failed pass, at most 1 s (retryable) or 30 s. */
  static Duration failedPassRetry(int failedPasses, boolean retryable) {
    int doublings = Math.min(Math.max(failedPasses - 1, 0), 10);
    Duration wait = FAILED_PASS_FIRST_RETRY.multipliedBy(1L << doublings);
    Duration longest = retryable ? RETRYABLE_PASS_LONGEST_RETRY : FAILED_PASS_LONGEST_RETRY;
    return wait.compareTo(longest) > 0 ? longest : wait;
  }

  /**
   * At most once an hour, after a pass: prunes the audit, turns commands that ended before the
   * tombstone age into tombstones and deletes the tombstones past their age.
   */
  private void keepHistoryNowAndThen() {
    Instant now = clock.instant();
    if (Duration.between(lastHistoryUpkeep, now).compareTo(HISTORY_UPKEEP_INTERVAL) > 0) {
      lastHistoryUpkeep = now;
      store.pruneAudit(now.minus(auditRetention));
      store.tombstoneEnded(now.minus(tombstoneAfter), now);
      store.deleteTombstones(now.minus(deleteTombstonesAfter));
    }
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
