package dev.outboxreplay;

import dev.outboxreplay.internal.replay.OutcomePolicy;
import dev.outboxreplay.internal.replay.ReplayEngine;
import dev.outboxreplay.internal.replay.ReplayGate;
import dev.outboxreplay.internal.replay.ReplayPass;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.NoSuchElementException;
import java.util.Optional;
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
 * {@link ConnectivityMonitor}, {@link #onAccepted()}, and a timer for the next due retry. They
 * coalesce into single-flight passes. While offline (a request could not leave) replay holds with
 * back-off and spends no attempts; network-up resumes it at once. Several replayers (threads or
 * processes sharing the file) may run at once: leases and fencing tokens keep them apart.
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

  private final ReplayEngine<T> engine;
  private final ReplayGate gate;
  private final OutboxStore<T> store;
  private final ConnectivityMonitor connectivity;
  private final Clock clock;
  private final Duration holdInterval;
  private final Duration auditRetention;
  private final ExecutorService senders;
  private final ScheduledExecutorService scheduler;
  private final AtomicBoolean passQueued = new AtomicBoolean();
  private final Object passLock = new Object();
  private final Object progress = new Object();
  private volatile boolean started;
  private volatile boolean closed;
  private ScheduledFuture<?> timer;
  private Instant lastAuditPrune = Instant.EPOCH;

  Replayer(ReplayerBuilder<T> b) {
    this.store = b.store;
    this.clock = b.clock;
    this.connectivity = b.connectivity;
    this.holdInterval = b.holdInterval;
    this.auditRetention = b.auditRetention;
    this.gate = new ReplayGate(b.session, b.retry, b.clock);
    this.senders = Executors.newFixedThreadPool(b.concurrency, daemon("outbox-sender-" + b.owner));
    ScheduledThreadPoolExecutor passThread = new ScheduledThreadPoolExecutor(1,
        daemon("outbox-replayer-" + b.owner));
    passThread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.scheduler = passThread;
    this.engine = ReplayEngine.of(b.store, b.transport, b.session, b.applier,
        new OutcomePolicy(b.retry, b.holdInterval, b.stalePolicy, b.forbiddenPolicy), gate,
        b.listener, b.failures, b.clock, b.owner, b.lease, b.batchSize, b.concurrency, senders);
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
        try {
          runPass();
        } catch (RuntimeException e) {
          LOG.warn("replay pass failed; the next trigger or timer retries", e);
        } finally {
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
        PassSummary summary = new ReplayPass<>(engine, () -> closed).run();
        pruneAuditNowAndThen();
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
   */
  public boolean awaitDrained(Duration timeout) throws InterruptedException {
    return awaitUntil(timeout, () -> store.nextDueAt().isEmpty()
        && Status.countOpen(store.countByStatus()) == 0 ? Optional.of(true) : Optional.empty())
        .isPresent();
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
      Optional<R> done = check.get();
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

  /**
   * Stops triggers and timers, lets a running pass finish its sends in flight (up to 30 s) and
   * record them, and never interrupts a thread that touches the database. Unfinished rows keep
   * their lease and are recovered by whoever claims next. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    connectivity.close();
    synchronized (this) {
      if (timer != null) {
        timer.cancel(false);
      }
    }
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
    Reason paused = gate.paused();
    Optional<Instant> due = paused == null ? store.nextDueAt()
        : paused == Reason.OFFLINE ? Optional.ofNullable(gate.offlineUntil())
        : Optional.of(now.plus(holdInterval));
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

  private void pruneAuditNowAndThen() {
    Instant now = clock.instant();
    if (Duration.between(lastAuditPrune, now).compareTo(Duration.ofHours(1)) > 0) {
      lastAuditPrune = now;
      store.pruneAudit(now.minus(auditRetention));
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
