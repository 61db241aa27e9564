package dev.outboxreplay;

import dev.outboxreplay.internal.Arguments;
import dev.outboxreplay.internal.PassCounters;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends an outbox's commands until each ends acked, conflict or rejected. A pass recovers expired
 * leases, claims due rows under a lease (at most one per entity, in accept order), reconciles rows
 * whose last attempt may have reached the server, sends the rest with bounded concurrency, and
 * records each outcome with the claim's fencing token. A confirmed answer is applied to local
 * state by the {@link ResponseApplier} in the same transaction that marks the row acked, and only
 * if the session fence admits it.
 *
 * <p>Triggers: {@link #start()} (recovery, then a pass), {@link #onNetworkAvailable()} and the
 * {@link ConnectivityMonitor}, {@link #onAccepted()}, and a timer for the next due retry. They
 * coalesce into single-flight passes. Several replayers (threads or processes sharing the file)
 * may run at once: leases and fencing tokens keep them from overwriting each other.
 *
 * <p>Thread-safe.
 *
 * @param <T> the store's transaction handle
 */
public final class Replayer<T> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Replayer.class);
  private static final int MAX_CLAIMS_PER_PASS = 10_000;
  /** Longest an answer waits on the pass thread to share its commit with later answers. */
  private static final long MAX_ANSWER_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  private final OutboxStore<T> store;
  private final Transport transport;
  private final SessionRuntime session;
  private final ResponseApplier<T> applier;
  private final RetryPolicy retry;
  private final Clock clock;
  private final String owner;
  private final Duration lease;
  private final int batchSize;
  private final int concurrency;
  private final StaleSessionPolicy stalePolicy;
  private final Duration holdInterval;
  private final Duration auditRetention;
  private final OutboxListener listener;
  private final FailureInjector failures;
  private final ConnectivityMonitor connectivity;
  private final ExecutorService senders;
  private final ScheduledExecutorService scheduler;
  private final AtomicBoolean passQueued = new AtomicBoolean();
  private final Object passLock = new Object();
  private volatile boolean pausedForCredentials;
  private volatile String refusedCredentials;
  private volatile boolean closed;
  private ScheduledFuture<?> timer;
  private Instant lastAuditPrune = Instant.EPOCH;

  private Replayer(Builder<T> b) {
    this.store = b.store;
    this.transport = b.transport;
    this.session = b.session;
    this.applier = b.applier;
    this.retry = b.retry;
    this.clock = b.clock;
    this.owner = b.owner;
    this.lease = b.lease;
    this.batchSize = b.batchSize;
    this.concurrency = b.concurrency;
    this.stalePolicy = b.stalePolicy;
    this.holdInterval = b.holdInterval;
    this.auditRetention = b.auditRetention;
    this.listener = b.listener;
    this.failures = b.failures;
    this.connectivity = b.connectivity;
    this.senders = Executors.newFixedThreadPool(b.concurrency, daemon("outbox-sender-" + owner));
    this.scheduler = Executors.newSingleThreadScheduledExecutor(daemon("outbox-replayer-" + owner));
  }

  /** A builder; the store and the transport are required. */
  public static <T> Builder<T> builder(OutboxStore<T> store, Transport transport) {
    return new Builder<>(store, transport);
  }

  /** Starts the connectivity monitor and requests a first pass (which begins with recovery). */
  public void start() {
    connectivity.start(this::onNetworkAvailable);
    requestPass();
  }

  /** The network is back: replay now. */
  public void onNetworkAvailable() {
    requestPass();
  }

  /** A command was accepted (and its transaction committed): replay now. */
  public void onAccepted() {
    requestPass();
  }

  /** The app has fresh credentials after a 401/403: resume and replay now. */
  public void onCredentialsRefreshed() {
    pausedForCredentials = false;
    requestPass();
  }

  /** Asks for a pass on the replayer's thread; requests made while one is queued coalesce. */
  public void requestPass() {
    if (closed || !passQueued.compareAndSet(false, true)) {
      return;
    }
    scheduler.execute(() -> {
      passQueued.set(false);
      try {
        runPass();
      } catch (RuntimeException e) {
        LOG.warn("replay pass failed; the next trigger or timer retries", e);
      } finally {
        scheduleNextDue();
      }
    });
  }

  /**
   * Runs one pass on the calling thread and returns what it did. Passes of one replayer never
   * overlap.
   *
   * <p>The pass thread claims rows in batches and keeps up to {@code concurrency} sends in
   * flight. Senders only send; the pass thread does all the writing. It keeps up to
   * {@code concurrency} more rows already marked {@code sending} ("primed"), so a sender that
   * finishes gets its next row at once, without waiting for a commit. Answers are recorded, and
   * claimed rows marked sending to refill the primed rows, in one transaction (one by one if that
   * fails), taken once half the senders have answered, the primed rows run low, a sender has
   * nothing to send, replay paused (a 401/403 pauses it as it arrives, before another primed row
   * is handed out), or the oldest unrecorded answer has waited 2 ms. A primed row is therefore
   * recorded as sending before its request goes out, never after; should the process die first,
   * it becomes {@code unknown} and is reconciled, like a row whose request was cut off. A primed row that is not sent after all (replay paused, half its lease spent
   * waiting, the pass stopped) is recorded {@code retryable_failed} with a {@code not_sent_*}
   * reason, not counted as an attempt.
   */
  public PassSummary runPass() {
    synchronized (passLock) {
      PassCounters counters = new PassCounters();
      String paused = pausedReason();
      if (paused != null) {
        listener.onReplayPaused(paused);
        return counters.summary(paused);
      }
      store.recoverExpiredLeases(clock.instant());
      CompletionService<Sent> completions = new ExecutorCompletionService<>(senders);
      Deque<OutboxRecord> ready = new ArrayDeque<>();
      Deque<OutboxRecord> primed = new ArrayDeque<>();
      List<Sent> answered = new ArrayList<>();
      long firstAnswerNanos = 0;
      int active = 0;
      try {
        int claims = 0;
        boolean mayClaim = true;
        while (true) {
          if (pausedReason() != null) {
            List<Sent> arrived = answered;
            answered = new ArrayList<>(); // handed over: never recorded twice, even on a throw
            record(arrived, counters);
            notSent(primed, "not_sent_replay_paused", counters);
            releaseAll(ready, counters);
            mayClaim = false;
          } else {
            active += startPrimed(primed, concurrency - active, completions, counters);
            int halfOfSenders = Math.max(1, concurrency / 2);
            boolean record = !answered.isEmpty() && (answered.size() >= halfOfSenders
                || active < concurrency
                || System.nanoTime() - firstAnswerNanos >= MAX_ANSWER_WAIT_NANOS);
            boolean refill = !ready.isEmpty()
                && (active < concurrency || primed.size() < halfOfSenders);
            if (record || refill) {
              List<Sent> arrived = answered;
              answered = new ArrayList<>(); // handed over: never recorded twice, even on a throw
              // a finished row may have unblocked its entity's next command
              mayClaim |= !arrived.isEmpty();
              primed.addAll(recordAndMark(arrived, ready, wanted(active, primed), counters));
              active += startPrimed(primed, concurrency - active, completions, counters);
            }
            if (mayClaim && ready.size() < concurrency && claims < MAX_CLAIMS_PER_PASS) {
              List<OutboxRecord> claimed = store.claim(owner, lease, batchSize, clock.instant());
              claims++;
              mayClaim = !claimed.isEmpty();
              counters.claimed.addAndGet(claimed.size());
              for (OutboxRecord r : claimed) {
                emit(r, r.claimedFrom(), "claimed");
                switch (triage(r, counters)) {
                  case SEND -> ready.add(r);
                  case RECONCILE -> {
                    completions.submit(() -> reconcileThenSend(r, counters));
                    active++;
                  }
                  case DONE -> { }
                }
              }
              primed.addAll(recordAndMark(List.of(), ready, wanted(active, primed), counters));
              active += startPrimed(primed, concurrency - active, completions, counters);
            }
          }
          if (active == 0) {
            if (ready.isEmpty() && primed.isEmpty() && answered.isEmpty()
                && (!mayClaim || claims >= MAX_CLAIMS_PER_PASS)) {
              break;
            }
            continue;
          }
          Future<Sent> done;
          if (answered.isEmpty()) {
            done = completions.take();
          } else {
            long waitNanos = MAX_ANSWER_WAIT_NANOS - (System.nanoTime() - firstAnswerNanos);
            done = completions.poll(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
            if (done == null) {
              continue; // the oldest answer has waited long enough: record it now
            }
          }
          for (; done != null; done = completions.poll()) {
            if (answered.isEmpty()) {
              firstAnswerNanos = System.nanoTime();
            }
            collect(answered, done);
            active--;
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        for (; active > 0; active--) {
          try {
            collect(answered, completions.take());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            break;
          }
        }
        record(answered, counters);
        notSent(primed, "not_sent_pass_stopped", counters);
      }
      pruneAuditNowAndThen();
      return counters.summary(pausedReason());
    }
  }

  /** Rows to mark sending now: one per free sender, plus enough to refill the primed rows. */
  private int wanted(int active, Deque<OutboxRecord> primed) {
    return (concurrency - active) + Math.max(0, concurrency - primed.size());
  }

  /**
   * Hands primed rows to up to {@code free} senders, oldest first. A row whose lease is half
   * spent is not sent: it is recorded as not sent, to be claimed afresh.
   *
   * @return how many sends were started
   */
  private int startPrimed(Deque<OutboxRecord> primed, int free,
      CompletionService<Sent> completions, PassCounters counters) {
    int started = 0;
    SessionRuntime.Snapshot s = null;
    while (started < free && !primed.isEmpty()) {
      OutboxRecord r = primed.poll();
      Instant now = clock.instant();
      if (r.leaseExpiresAt().isBefore(now.plus(lease.dividedBy(2)))) {
        notSent(r, "not_sent_lease_half_spent", counters);
        continue;
      }
      if (s == null) {
        s = session.current();
      }
      SessionRuntime.Snapshot sentUnder = s;
      completions.submit(() -> send(r, sentUnder));
      started++;
    }
    return started;
  }

  /**
   * Records rows marked sending whose request was never made as {@code retryable_failed}, due
   * now and not counted as an attempt, and empties {@code primed}.
   */
  private void notSent(Deque<OutboxRecord> primed, String reason, PassCounters counters) {
    for (OutboxRecord r = primed.poll(); r != null; r = primed.poll()) {
      notSent(r, reason, counters);
    }
  }

  private void notSent(OutboxRecord sending, String reason, PassCounters counters) {
    Instant now = clock.instant();
    recordOne(step(sending, Status.SENDING, Outcome.retryable(now, error(reason,
        "marked sending, but the request was never made", now)).notCountedAsAttempt(),
        counters.released), counters);
  }

  /**
   * Stops triggers and timers and waits (up to 30 s) for sends in flight. Unfinished rows keep
   * their lease and are recovered by whoever claims next.
   */
  @Override
  public void close() {
    closed = true;
    connectivity.close();
    scheduler.shutdownNow();
    senders.shutdown();
    try {
      if (!senders.awaitTermination(30, TimeUnit.SECONDS)) {
        senders.shutdownNow();
      }
    } catch (InterruptedException e) {
      senders.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  private String pausedReason() {
    SessionRuntime.Snapshot s = session.current();
    if (s.revoked()) {
      return "session_revoked";
    }
    if (pausedForCredentials) {
      if (!Objects.equals(refusedCredentials, s.credentials())) {
        pausedForCredentials = false; // the app has new credentials
        return null;
      }
      return "credentials_refused";
    }
    return null;
  }

  private enum Next { SEND, RECONCILE, DONE }

  /** Decides on the pass thread what a claimed row needs; settles held, stale and poison rows. */
  private Next triage(OutboxRecord claimed, PassCounters counters) {
    failures.at(FailurePoint.AFTER_CLAIM);
    Instant now = clock.instant();
    try {
      long current = session.current().version();
      if (claimed.sessionVersion() < current) {
        switch (stalePolicy) {
          case HOLD -> {
            release(claimed, now.plus(holdInterval), "held_stale_session", counters);
            return Next.DONE;
          }
          case REJECT -> {
            recordOne(step(claimed, Status.CLAIMED, Outcome.rejected(error("stale_session",
                "accepted under session version " + claimed.sessionVersion() + ", now "
                    + current, now), null), counters.rejected), counters);
            return Next.DONE;
          }
          case RESEND -> { }
        }
      }
      String poison = retry.poisonReason(claimed, now);
      if (poison != null) {
        recordOne(poisonStep(claimed, Status.CLAIMED, poison, counters), counters);
        return Next.DONE;
      }
    } catch (FencedOffException e) {
      counters.fencedOff.incrementAndGet();
      LOG.debug("fenced off: {}", e.getMessage());
      return Next.DONE;
    }
    return claimed.claimedFrom() == Status.UNKNOWN ? Next.RECONCILE : Next.SEND;
  }

  private void releaseAll(Deque<OutboxRecord> ready, PassCounters counters) {
    for (OutboxRecord r = ready.poll(); r != null; r = ready.poll()) {
      try {
        release(r, clock.instant(), "replay_paused", counters);
      } catch (FencedOffException e) {
        counters.fencedOff.incrementAndGet();
      }
    }
  }

  /** A request's answer, recorded by the pass thread. */
  private record Sent(OutboxRecord sending, TransportResult result,
      SessionRuntime.Snapshot session) {}

  /** An outcome to write for a held row, and what to report once it commits. */
  private record Step(OutboxRecord held, Status expected, Outcome outcome, String reason,
      AtomicInteger counter, boolean poison) {
    /** An ack: the {@link ResponseApplier} runs in the same transaction. */
    boolean applies() {
      return outcome.status() == Status.ACKED;
    }
  }

  /**
   * On a sender: a row whose last attempt may have reached the server. Returns the answer when
   * it was resent, null when reconciliation settled it.
   */
  private Sent reconcileThenSend(OutboxRecord claimed, PassCounters counters) {
    try {
      SessionRuntime.Snapshot s = session.current();
      if (reconciled(claimed, s, counters)) {
        return null;
      }
      Instant now = clock.instant();
      OutboxRecord sending = store.markSending(claimed.commandId(), claimed.fencingToken(),
          now.plus(lease), now);
      emit(sending, Status.CLAIMED, "sending");
      return send(sending, s);
    } catch (FencedOffException e) {
      counters.fencedOff.incrementAndGet();
      LOG.debug("fenced off: {}", e.getMessage());
      return null;
    }
  }

  /** On a sender: one attempt of a row already marked sending. */
  private Sent send(OutboxRecord sending, SessionRuntime.Snapshot s) {
    failures.at(FailurePoint.BEFORE_NETWORK_SEND);
    TransportResult result = transport.send(sending, s);
    failures.at(FailurePoint.AFTER_RESPONSE_BEFORE_ACK);
    return new Sent(sending, result, s);
  }

  /** Asks the receiver first; true when that settled the row (acked or released). */
  private boolean reconciled(OutboxRecord claimed, SessionRuntime.Snapshot s,
      PassCounters counters) {
    Optional<Reconciliation> answer;
    try {
      answer = transport.reconcile(claimed, s);
    } catch (IOException e) {
      release(claimed, retry.nextAttemptAt(claimed.attempt(), clock.instant(), null),
          "reconciliation_unreachable", counters);
      return true;
    }
    if (answer.isEmpty()) {
      return false; // no reconciliation: resend with the same key
    }
    switch (answer.get().state()) {
      case COMMITTED -> {
        counters.reconciled.incrementAndGet();
        recordOne(ackStep(claimed, Status.CLAIMED, answer.get().response(), s,
            "reconciled_committed", counters), counters);
        return true;
      }
      case PROCESSING -> {
        release(claimed, clock.instant().plus(holdInterval), "reconciled_processing", counters);
        return true;
      }
      default -> {
        return false; // not seen or failed: it did not take effect, resend with the same key
      }
    }
  }

  /** What the answer to one attempt means for its row. */
  private Step decide(Sent sent, PassCounters counters) {
    OutboxRecord sending = sent.sending();
    TransportResult result = sent.result();
    Instant now = clock.instant();
    ErrorInfo error = error(result.errorCode(), result.message(), now);
    return switch (result.kind()) {
      case ACKED -> ackStep(sending, Status.SENDING, result.response(), sent.session(), "acked",
          counters);
      case RETRYABLE, UNKNOWN -> {
        if (sending.attempt() + 1 >= retry.maxAttempts()) {
          yield poisonStep(sending, Status.SENDING, "poison_max_attempts", counters);
        }
        Instant next = retry.nextAttemptAt(sending.attempt() + 1, now, result.retryAfter());
        yield result.kind() == TransportResult.Kind.UNKNOWN
            ? step(sending, Status.SENDING, Outcome.unknown(next, error), counters.unknown)
            : step(sending, Status.SENDING, Outcome.retryable(next, error), counters.retried);
      }
      case IN_PROGRESS -> {
        Instant next = now.plus(result.retryAfter() != null ? result.retryAfter() : holdInterval);
        yield step(sending, Status.SENDING, Outcome.retryable(next, error).notCountedAsAttempt(),
            counters.retried);
      }
      case CONFLICT -> step(sending, Status.SENDING, Outcome.conflict(error, result.response()),
          counters.conflicts);
      case REJECTED -> step(sending, Status.SENDING, Outcome.rejected(error, result.response()),
          counters.rejected);
      case UNAUTHORIZED -> step(sending, Status.SENDING,
          Outcome.retryable(now, error).notCountedAsAttempt(), counters.retried);
    };
  }

  /** An outcome reported under its error code, or its status when it has none. */
  private static Step step(OutboxRecord held, Status expected, Outcome outcome,
      AtomicInteger counter) {
    return new Step(held, expected, outcome, reasonOf(outcome), counter, false);
  }

  private static String reasonOf(Outcome outcome) {
    return outcome.error() != null ? outcome.error().code() : outcome.status().wireName();
  }

  /** Acks and applies if the session fence admits the answer; otherwise retries later. */
  private Step ackStep(OutboxRecord held, Status expected, StoredResponse response,
      SessionRuntime.Snapshot sentUnder, String reason, PassCounters counters) {
    if (!session.current().admits(sentUnder)) {
      Instant now = clock.instant();
      Outcome stale = Outcome.retryable(now, error("stale_response",
          "the session changed while the request was in flight; not applied", now))
          .notCountedAsAttempt();
      return step(held, expected, stale, counters.retried);
    }
    return new Step(held, expected, Outcome.acked(response), reason, counters.acked, false);
  }

  private Step poisonStep(OutboxRecord held, Status expected, String reason,
      PassCounters counters) {
    Outcome gaveUp = Outcome.rejected(error(reason, "gave up after " + (held.attempt()
        + (expected == Status.SENDING ? 1 : 0)) + " attempts", clock.instant()), null);
    return new Step(held, expected, gaveUp, reason, counters.rejected, true);
  }

  /**
   * Records the answers and marks up to {@code wanted} ready rows sending, all in one
   * transaction. If that transaction fails (a row fenced off, an applier that threw) nothing of
   * it is kept: each answer is then recorded in its own transaction and the rows are marked
   * sending in one more.
   *
   * @return the rows now marked sending, in claim order
   */
  private List<OutboxRecord> recordAndMark(List<Sent> answered, Deque<OutboxRecord> ready,
      int wanted, PassCounters counters) {
    List<Step> steps = new ArrayList<>(answered.size());
    for (Sent sent : answered) {
      steps.add(decide(sent, counters));
    }
    List<OutboxRecord> next = new ArrayList<>(Math.max(0, Math.min(wanted, ready.size())));
    while (next.size() < wanted && !ready.isEmpty()) {
      next.add(ready.poll());
    }
    if (steps.isEmpty() && next.isEmpty()) {
      return List.of();
    }
    Instant now = clock.instant();
    Instant leaseEnd = now.plus(lease);
    List<OutboxRecord> sending = null;
    if (steps.size() > 1 || (steps.size() == 1 && !next.isEmpty())) {
      try {
        Written written = store.inTransaction(tx -> {
          List<OutboxRecord> rows = new ArrayList<>(steps.size());
          for (Step step : steps) {
            rows.add(write(tx, step));
          }
          return new Written(rows, next.isEmpty() ? List.of()
              : store.markSending(tx, next, leaseEnd, now));
        });
        for (int i = 0; i < steps.size(); i++) {
          reported(steps.get(i), written.recorded().get(i));
        }
        sending = written.sending();
      } catch (RuntimeException e) {
        LOG.debug("recording {} answers together failed; recording each alone", steps.size(), e);
      }
    }
    if (sending == null) {
      for (Step step : steps) {
        recordOne(step, counters);
      }
      sending = store.markSending(next, leaseEnd, now);
    }
    counters.fencedOff.addAndGet(next.size() - sending.size());
    for (OutboxRecord r : sending) {
      emit(r, Status.CLAIMED, "sending");
    }
    return sending;
  }

  /** Records the answers only (see {@link #recordAndMark}). */
  private void record(List<Sent> answered, PassCounters counters) {
    recordAndMark(answered, new ArrayDeque<>(), 0, counters);
  }

  /** What one transaction of {@link #recordAndMark} wrote. */
  private record Written(List<OutboxRecord> recorded, List<OutboxRecord> sending) {}

  /** Records one outcome in its own transaction; an applier failure makes it a retry. */
  private void recordOne(Step step, PassCounters counters) {
    OutboxRecord held = step.held();
    try {
      reported(step, store.inTransaction(tx -> write(tx, step)));
    } catch (FencedOffException e) {
      counters.fencedOff.incrementAndGet();
      LOG.debug("fenced off: {}", e.getMessage());
    } catch (RuntimeException e) {
      if (!step.applies()) {
        LOG.warn("recording the outcome of command {} failed; its lease will expire and it is "
            + "retried", held.commandId(), e);
        return;
      }
      LOG.warn("applying the answer to command {} failed; it will be resent", held.commandId(), e);
      Instant now = clock.instant();
      Outcome retryLater = Outcome.retryable(retry.nextAttemptAt(held.attempt() + 1, now, null),
          error("apply_failed", e.toString(), now));
      recordOne(step(held, step.expected(), retryLater, counters.retried), counters);
    }
  }

  /**
   * The fenced write first: a replayer that lost its lease is refused before any application
   * code runs. Row and applied state commit together, or neither.
   */
  private OutboxRecord write(T tx, Step step) throws Exception {
    OutboxRecord held = step.held();
    OutboxRecord after = store.complete(tx, held.commandId(), held.fencingToken(),
        step.expected(), step.outcome(), clock.instant());
    if (step.applies()) {
      applier.apply(tx, after, step.outcome().response());
    }
    return after;
  }

  private void reported(Step step, OutboxRecord after) {
    step.counter().incrementAndGet();
    emit(after, step.expected(), step.reason());
    if (step.poison()) {
      listener.onPoison(after, step.reason());
    }
  }

  /**
   * Adds a finished send's answer to {@code answered} (a reconciliation that settled its row has
   * none). A 401/403 pauses replay here, as it arrives, so no primed row is handed out after it:
   * the pass loop sees the pause before it starts another send.
   */
  private void collect(List<Sent> answered, Future<Sent> done) throws InterruptedException {
    try {
      Sent sent = done.get();
      if (sent == null) {
        return;
      }
      if (sent.result().kind() == TransportResult.Kind.UNAUTHORIZED) {
        refusedCredentials = sent.session().credentials();
        pausedForCredentials = true;
        listener.onReplayPaused("credentials_refused");
      }
      answered.add(sent);
    } catch (ExecutionException e) {
      LOG.warn("sending a command failed unexpectedly; its lease will expire and it is retried",
          e.getCause());
    }
  }

  private void release(OutboxRecord claimed, Instant nextAttemptAt, String reason,
      PassCounters counters) {
    counters.released.incrementAndGet();
    OutboxRecord after = store.release(claimed.commandId(), claimed.fencingToken(), nextAttemptAt,
        clock.instant());
    emit(after, Status.CLAIMED, reason);
  }

  private void emit(OutboxRecord after, Status from, String reason) {
    try {
      listener.onTransition(new OutboxListener.Transition(after.commandId(),
          after.idempotencyKey(), from, after.status(), after.fencingToken(), reason,
          clock.instant()));
    } catch (RuntimeException e) {
      LOG.warn("outbox listener threw; ignored", e);
    }
  }

  private void scheduleNextDue() {
    if (closed) {
      return;
    }
    Optional<Instant> due = store.nextDueAt();
    synchronized (this) {
      if (timer != null) {
        timer.cancel(false);
      }
      if (due.isPresent()) {
        long delay = Math.max(10, Duration.between(clock.instant(), due.get()).toMillis());
        timer = scheduler.schedule(this::requestPass, delay, TimeUnit.MILLISECONDS);
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

  private static ErrorInfo error(String code, String message, Instant at) {
    return new ErrorInfo(code, message, at);
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** Configures a {@link Replayer}; each setter validates its argument. */
  public static final class Builder<T> {
    private final OutboxStore<T> store;
    private final Transport transport;
    private SessionRuntime session = SessionRuntime.ANONYMOUS;
    private ResponseApplier<T> applier = ResponseApplier.none();
    private RetryPolicy retry = RetryPolicy.defaults(new java.security.SecureRandom());
    private Clock clock = Clock.systemUTC();
    private String owner = "replayer-" + ProcessHandle.current().pid() + "-"
        + Integer.toHexString(System.identityHashCode(this));
    private Duration lease = Duration.ofSeconds(60);
    private int batchSize = 32;
    private int concurrency = 4;
    private StaleSessionPolicy stalePolicy = StaleSessionPolicy.HOLD;
    private Duration holdInterval = Duration.ofSeconds(30);
    private Duration auditRetention = Duration.ofDays(30);
    private OutboxListener listener = OutboxListener.NONE;
    private FailureInjector failures = FailureInjector.NONE;
    private ConnectivityMonitor connectivity = ConnectivityMonitor.NONE;

    private Builder(OutboxStore<T> store, Transport transport) {
      this.store = Objects.requireNonNull(store, "store == null");
      this.transport = Objects.requireNonNull(transport, "transport == null");
    }

    public Builder<T> session(SessionRuntime session) {
      this.session = Objects.requireNonNull(session, "session == null");
      return this;
    }

    public Builder<T> responseApplier(ResponseApplier<T> applier) {
      this.applier = Objects.requireNonNull(applier, "responseApplier == null");
      return this;
    }

    public Builder<T> retryPolicy(RetryPolicy retry) {
      this.retry = Objects.requireNonNull(retry, "retryPolicy == null");
      return this;
    }

    public Builder<T> clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /** Name recorded as claim owner. Default: process id and an instance hash. */
    public Builder<T> owner(String owner) {
      if (owner == null || owner.isBlank() || owner.length() > 200) {
        throw new IllegalArgumentException("owner must be 1-200 characters: " + owner);
      }
      this.owner = owner;
      return this;
    }

    /**
     * Claim lease. Keep it at least twice the transport's call timeout: a row marked sending
     * ahead of a free sender may wait for one call before its own, and one whose lease is half
     * spent by then is not sent but claimed afresh. Default 60 s.
     */
    public Builder<T> lease(Duration lease) {
      this.lease = Arguments.positive("lease", lease);
      return this;
    }

    /** Rows claimed at a time. Default 32. */
    public Builder<T> batchSize(int batchSize) {
      this.batchSize = Arguments.atLeastOne("batchSize", batchSize);
      return this;
    }

    /** Sends in flight at once (different entities). Default 4. */
    public Builder<T> concurrency(int concurrency) {
      this.concurrency = Arguments.atLeastOne("concurrency", concurrency);
      return this;
    }

    /** Commands of an older session version. Default {@link StaleSessionPolicy#HOLD}. */
    public Builder<T> staleSessionPolicy(StaleSessionPolicy policy) {
      this.stalePolicy = Objects.requireNonNull(policy, "staleSessionPolicy == null");
      return this;
    }

    /** Wait before looking again at a held, in-progress or processing command. Default 30 s. */
    public Builder<T> holdInterval(Duration holdInterval) {
      this.holdInterval = Arguments.positive("holdInterval", holdInterval);
      return this;
    }

    /** How long audit entries are kept. Default 30 days. */
    public Builder<T> auditRetention(Duration auditRetention) {
      this.auditRetention = Arguments.positive("auditRetention", auditRetention);
      return this;
    }

    public Builder<T> listener(OutboxListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener == null");
      return this;
    }

    public Builder<T> failureInjector(FailureInjector failures) {
      this.failures = Objects.requireNonNull(failures, "failureInjector == null");
      return this;
    }

    public Builder<T> connectivityMonitor(ConnectivityMonitor connectivity) {
      this.connectivity = Objects.requireNonNull(connectivity, "connectivityMonitor == null");
      return this;
    }

    public Replayer<T> build() {
      return new Replayer<>(this);
    }
  }
}
