package dev.outboxreplay.internal.replay;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.internal.PassCounters;
import dev.outboxreplay.internal.replay.Recorder.Step;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replay pass, run on one thread that does every write: recover expired leases, claim due
 * rows in batches, decide each with the {@link OutcomePolicy}, hand requests to sender tasks
 * (network I/O only, they return what happened), and record answers with the {@link Recorder}.
 *
 * <p>Up to {@code concurrency} sends are in flight, and up to {@code concurrency} more rows are
 * already marked sending ("primed"), so a free sender gets its next row without waiting for a
 * commit. Answers are recorded, the next batch claimed when fewer than {@code concurrency}
 * claimed rows are left, and rows marked sending to refill the primed ones, in one transaction,
 * taken once half the senders have answered, the primed rows run low, a sender is idle, replay
 * paused, or the oldest unrecorded answer has waited 2 ms. A primed row is therefore
 * recorded sending before its request goes out, never after. A primed row not sent after all
 * (paused, half its lease spent, pass stopped) is recorded with a {@code not_sent_*} reason, not
 * as an attempt.
 *
 * @param <T> the store's transaction handle
 */
public final class ReplayPass<T> {
  private static final Logger LOG = LoggerFactory.getLogger(ReplayPass.class);
  private static final int MAX_CLAIMS_PER_PASS = 10_000;
  /** Longest an answer waits to share its commit with later answers. */
  private static final long MAX_ANSWER_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  private final ReplayEngine<T> e;
  private final BooleanSupplier stopping;
  private final PassCounters counters = new PassCounters();
  private final CompletionService<Attempt> completions;
  /** Claimed rows to mark sending, in claim order. */
  private final Deque<OutboxRecord> ready = new ArrayDeque<>();
  /** Rows marked sending, waiting for a free sender. */
  private final Deque<OutboxRecord> primed = new ArrayDeque<>();
  /** Answers decided but not yet recorded. */
  private List<Step> answered = new ArrayList<>();
  /** The next command of each entity in flight, marked sending behind it. */
  private final Successors successors = new Successors();
  private long firstAnswerNanos;
  private int active;
  private int claims;
  private boolean mayClaim = true;

  /**
   * @param stopping true once the replayer is closing: start no more requests
   */
  public ReplayPass(ReplayEngine<T> engine, BooleanSupplier stopping) {
    this.e = engine;
    this.stopping = stopping;
    this.completions = new ExecutorCompletionService<>(engine.senders());
  }

  /** What a sender task brings back. */
  private record Attempt(OutboxRecord held, Status expected, TransportResult result,
      boolean reconciled, SessionRuntime.Snapshot session) {
    /** A reconciliation that did not settle the row: send it with the same key. */
    boolean resend() {
      return result == null;
    }
  }

  /** Runs the pass to its end; call once. */
  public PassSummary run() {
    Reason paused = e.gate().paused();
    if (paused != null) {
      reportPause(paused);
      return counters.summary(paused);
    }
    for (OutboxStore.RecoveredLease recovered
        : e.store().recoverExpiredLeases(e.clock().instant())) {
      e.recorder().recovered(recovered);
    }
    try {
      loop();
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    } finally {
      for (; active > 0; active--) {
        try {
          collect(completions.take());
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      recordAnswers();
      notSent(Reason.NOT_SENT_PASS_STOPPED);
    }
    return counters.summary(e.gate().paused());
  }

  private void loop() throws InterruptedException {
    while (true) {
      boolean stop = stopping.getAsBoolean();
      if (stop || e.gate().paused() != null) {
        recordAnswers();
        notSent(stop ? Reason.NOT_SENT_PASS_STOPPED : Reason.NOT_SENT_REPLAY_PAUSED);
        releaseReady();
        mayClaim = false;
      } else {
        startPrimed();
        int senders = senders();
        int halfOfSenders = Math.max(1, senders / 2);
        boolean record = !answered.isEmpty() && (answered.size() >= halfOfSenders
            || active < senders
            || System.nanoTime() - firstAnswerNanos >= MAX_ANSWER_WAIT_NANOS);
        boolean refill = !ready.isEmpty()
            && (active < senders || primed.size() < halfOfSenders);
        if (record || refill) {
          mayClaim |= !answered.isEmpty(); // a finished row may have unblocked its entity
        }
        int wanted = wanted();
        boolean claim = mayClaim && claims < MAX_CLAIMS_PER_PASS
            && ready.size() - Math.min(wanted, ready.size()) < e.concurrency();
        if (record || refill || claim || followNeeded()) {
          recordAnswers(wanted, claim);
          startPrimed();
          if (followNeeded()) {
            recordAnswers(0, false);
          }
        }
      }
      if (active == 0) {
        if (ready.isEmpty() && primed.isEmpty() && !successors.anyReleased() && answered.isEmpty()
            && (!mayClaim || claims >= MAX_CLAIMS_PER_PASS)) {
          return;
        }
        continue;
      }
      Future<Attempt> done;
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
        collect(done);
        active--;
      }
    }
  }

  /**
   * True when rows were handed to senders since the last recording and nothing else is lined up
   * for the senders: the next command of each of their entities is then marked sending at once,
   * so that it can leave the moment the one before it ends.
   */
  private boolean followNeeded() {
    return successors.startedSinceRecording() && primed.isEmpty() && !successors.anyReleased()
        && ready.isEmpty();
  }

  /** Rows to mark sending now: one per free sender, plus enough to refill the primed rows. */
  private int wanted() {
    int senders = senders();
    return Math.max(0, senders - active) + Math.max(0, senders - primed.size());
  }

  /** Sends in flight at once: one while probing a network that was just offline. */
  private int senders() {
    return e.gate().probing() ? 1 : e.concurrency();
  }

  /**
   * Records the answers decided so far, claims due rows when {@code claim}, and marks up to
   * {@code wanted} ready or just claimed rows sending, all in one transaction.
   */
  private void recordAnswers(int wanted, boolean claim) {
    recordAnswers(wanted, claim, true);
  }

  /**
   * As {@link #recordAnswers(int, boolean)}; with {@code withSuccessors}, when {@link
   * #followNeeded()} and not while probing a network that was just offline, also claims and marks
   * sending the next command of each entity whose row was handed to a sender since the last
   * recording and is still in flight. While other rows are lined up, the senders have work
   * anyway, and no successor is looked for.
   */
  private void recordAnswers(int wanted, boolean claim, boolean withSuccessors) {
    List<OutboxRecord> successorsFor = successors.toFollow(withSuccessors && followNeeded()
        && !e.gate().probing());
    List<Step> steps = answered;
    answered = new ArrayList<>(); // handed over: never recorded twice, even on a throw
    List<OutboxRecord> next = new ArrayList<>(Math.max(0, Math.min(wanted, ready.size())));
    while (next.size() < wanted && !ready.isEmpty()) {
      next.add(ready.poll());
    }
    if (steps.isEmpty() && next.isEmpty() && !claim && successorsFor.isEmpty()) {
      return;
    }
    Instant now = e.clock().instant();
    Claim batch = claim || !successorsFor.isEmpty()
        ? new Claim(claim, wanted - next.size(), successorsFor, now) : null;
    for (OutboxRecord r : e.recorder().recordAndMark(steps, next, batch, now.plus(e.lease()), now,
        counters)) {
      CommandId earlier = batch == null ? null : batch.successorOf(r.commandId());
      if (earlier != null) {
        successors.markedBehind(earlier, r);
      } else {
        primed.add(r);
      }
    }
  }

  /** Records the answers decided so far; claims nothing, marks nothing. */
  private void recordAnswers() {
    recordAnswers(0, false, false);
  }

  /**
   * The claims made in a recording transaction. With {@code heads}, one claim of up to a batch
   * of due rows: the rows the policy sends, up to {@code toMark}, are marked sending in that
   * transaction; once it commits, the others wait in {@link #ready}, go to reconciliation or have
   * their decision recorded. Then, for each row of {@code successorsFor}, the next command of its
   * entity, marked sending too: it waits in {@link Successors} for that row's answer.
   */
  private final class Claim implements Recorder.ClaimInTransaction<T> {
    private final boolean heads;
    private final int toMark;
    private final List<OutboxRecord> successorsFor;
    private final Instant now;
    /** What the last {@link #claim} call took, in claim order. */
    private List<Claimed> claimed = List.of();
    /** The successors the last {@link #claim} call took, as claimed, in claim order. */
    private List<Followed> followed = List.of();

    Claim(boolean heads, int toMark, List<OutboxRecord> successorsFor, Instant now) {
      this.heads = heads;
      this.toMark = toMark;
      this.successorsFor = successorsFor;
      this.now = now;
    }

    /** The in-flight row's id the row {@code id} was claimed to follow, or null. */
    CommandId successorOf(CommandId id) {
      for (Followed f : followed) {
        if (f.next().commandId().equals(id)) {
          return f.earlier();
        }
      }
      return null;
    }

    /** A successor claimed behind the in-flight row {@code earlier}. */
    private record Followed(CommandId earlier, OutboxRecord next) {}

    /** A claimed row, the policy's decision for it, and whether it was marked sending with it. */
    private record Claimed(OutboxRecord row, ClaimDecision decision, boolean marked) {}

    @Override
    public List<OutboxRecord> claim(T tx) {
      List<OutboxRecord> rows = heads
          ? e.store().claim(tx, e.owner(), e.lease(), e.batchSize(), now) : List.of();
      long sessionVersion = e.session().current().version();
      claimed = new ArrayList<>(rows.size());
      List<OutboxRecord> mark = new ArrayList<>();
      for (OutboxRecord r : rows) {
        ClaimDecision decision = e.policy().onClaim(r, sessionVersion, now);
        boolean marked = decision.next() == ClaimDecision.Next.SEND && mark.size() < toMark;
        if (marked) {
          mark.add(r);
        }
        claimed.add(new Claimed(r, decision, marked));
      }
      followed = new ArrayList<>();
      for (OutboxRecord earlier : successorsFor) {
        e.store().claimNextOfEntity(tx, e.owner(), e.lease(), earlier, sessionVersion, now)
            .ifPresent(next -> followed.add(new Followed(earlier.commandId(), next)));
      }
      for (Followed f : followed) {
        mark.add(f.next());
      }
      return mark;
    }

    @Override
    public void committed() {
      if (heads) {
        claims++;
        mayClaim = !claimed.isEmpty();
      }
      counters.claimed.addAndGet(claimed.size() + followed.size());
      for (Followed f : followed) { // sending already: the recorder reports it
        e.recorder().claimed(f.next(), now);
        e.failures().at(FailurePoint.AFTER_CLAIM);
      }
      for (Claimed c : claimed) {
        OutboxRecord r = c.row();
        e.recorder().claimed(r, now);
        e.failures().at(FailurePoint.AFTER_CLAIM);
        switch (c.decision().next()) {
          case SEND -> {
            if (!c.marked()) { // a marked row is sending already: the recorder reports it
              ready.add(r);
            }
          }
          case RECONCILE -> {
            SessionRuntime.Snapshot s = e.session().current();
            completions.submit(() -> reconcile(r, s));
            active++;
          }
          case RECORD -> e.recorder().recordOne(new Step(r, Status.CLAIMED,
              c.decision().decision()), now, counters);
        }
      }
    }
  }

  /**
   * Hands released successors, then primed rows, to free senders, oldest first; a row with half
   * its lease spent is not.
   */
  private void startPrimed() {
    SessionRuntime.Snapshot s = null;
    int senders = senders();
    while (active < senders && (successors.anyReleased() || !primed.isEmpty())) {
      OutboxRecord r = successors.anyReleased() ? successors.pollReleased() : primed.poll();
      Instant now = e.clock().instant();
      if (r.leaseExpiresAt().isBefore(now.plus(e.lease().dividedBy(2)))) {
        notSent(r, Reason.NOT_SENT_LEASE_HALF_SPENT, now);
        continue;
      }
      if (s == null) {
        s = e.session().current();
      }
      SessionRuntime.Snapshot sentUnder = s;
      completions.submit(() -> send(r, sentUnder));
      active++;
      successors.started(r);
    }
  }

  /**
   * Decides a finished task's answer. A refused session or an offline network takes effect here,
   * as it arrives, so no primed row is handed out after it. The successor marked sending behind
   * the answered row is released to the senders when the answer ends the row (its end is then
   * recorded while the successor's request is in flight, and the successor's response is applied
   * only once it is), and is given back unsent otherwise.
   */
  private void collect(Future<Attempt> done) throws InterruptedException {
    try {
      Attempt a = done.get();
      successors.returned(a.held().commandId());
      if (a.resend()) {
        ready.add(a.held());
        return;
      }
      boolean admits = a.result().kind() != TransportResult.Kind.ACKED
          || e.session().current().admits(a.session());
      Decision decision = e.policy().onAnswer(a.held(), a.expected(), a.result(),
          a.reconciled(), admits, e.clock().instant());
      switch (decision.effect()) {
        case PAUSE_FOR_CREDENTIALS -> {
          e.gate().credentialsRefused(a.session());
          reportPause(Reason.CREDENTIALS_REFUSED);
        }
        case OFFLINE -> {
          e.gate().wentOffline();
          reportPause(Reason.OFFLINE);
        }
        default -> e.gate().reachedReceiver();
      }
      if (answered.isEmpty()) {
        firstAnswerNanos = System.nanoTime();
      }
      Successors.Answered step = successors.answered(a.held(), a.expected(), decision,
          next -> e.policy().notSent(next, Reason.NOT_SENT_EARLIER_COMMAND_OPEN,
              e.clock().instant()));
      answered.add(step.step());
      if (step.givenBack() != null) {
        answered.add(step.givenBack());
      }
    } catch (ExecutionException ex) {
      LOG.warn("a sender task failed unexpectedly; its lease will expire and it is retried",
          ex.getCause());
    }
  }

  private void reportPause(Reason reason) {
    if (e.gate().firstReport(reason)) {
      try {
        e.listener().onReplayPaused(reason);
      } catch (RuntimeException ex) {
        LOG.warn("outbox listener threw; ignored", ex);
      }
    }
  }

  /**
   * Gives back unsent every row marked sending and not handed to a sender: primed rows, released
   * successors, and successors whose earlier command has no answer to come in this pass.
   */
  private void notSent(Reason reason) {
    Instant now = e.clock().instant();
    for (OutboxRecord r : successors.unsent(false)) {
      notSent(r, reason, now);
    }
    for (OutboxRecord r = primed.poll(); r != null; r = primed.poll()) {
      notSent(r, reason, now);
    }
    for (OutboxRecord r : successors.unsent(active == 0)) {
      notSent(r, reason, now);
    }
  }

  private void notSent(OutboxRecord sending, Reason reason, Instant now) {
    successors.givenBack(sending);
    e.recorder().recordOne(new Step(sending, Status.SENDING,
        e.policy().notSent(sending, reason, now)), now, counters);
  }

  /** Gives claimed rows back unsent, due now. */
  private void releaseReady() {
    Instant now = e.clock().instant();
    for (OutboxRecord r = ready.poll(); r != null; r = ready.poll()) {
      e.recorder().recordOne(new Step(r, Status.CLAIMED,
          e.policy().notSent(r, Reason.REPLAY_PAUSED, now)), now, counters);
    }
  }

  /** On a sender: one attempt of a row already marked sending. */
  private Attempt send(OutboxRecord sending, SessionRuntime.Snapshot s) {
    e.failures().at(FailurePoint.BEFORE_NETWORK_SEND);
    TransportResult result = e.transport().send(sending, s);
    e.failures().at(FailurePoint.AFTER_RESPONSE_BEFORE_ACK);
    return new Attempt(sending, Status.SENDING, result, false, s);
  }

  /**
   * On a sender: asks the receiver what became of a row whose last attempt may have reached it.
   * Anything but committed or processing (not seen, failed, no reconciliation, unreachable) means
   * resend with the same key: a draft receiver answers a repeat with its stored response.
   */
  private Attempt reconcile(OutboxRecord claimed, SessionRuntime.Snapshot s) {
    Optional<Reconciliation> answer;
    try {
      answer = e.transport().reconcile(claimed, s);
    } catch (IOException ex) {
      LOG.debug("reconciling {} failed; resending with its key", claimed.commandId(), ex);
      answer = Optional.empty();
    }
    if (answer.isPresent()) {
      Reconciliation r = answer.get();
      switch (r.state()) {
        case COMMITTED -> {
          return new Attempt(claimed, Status.CLAIMED, new TransportResult(
              TransportResult.Kind.ACKED, r.response(), null, "reconciled_committed", ""), true,
              s);
        }
        case PROCESSING -> {
          return new Attempt(claimed, Status.CLAIMED, new TransportResult(
              TransportResult.Kind.IN_PROGRESS, null, null, "reconciled_processing",
              "the receiver is still processing this key"), true, s);
        }
        default -> { }
      }
    }
    return new Attempt(claimed, Status.CLAIMED, null, false, s);
  }
}
