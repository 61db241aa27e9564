package dev.outboxreplay.internal.replay;

import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Reason;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.Status;
import dev.outboxreplay.internal.PassCounters;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes decisions: the fenced status change, the response applier in the same transaction for
 * an ack, then, after commit, the listener with the reason the audit recorded. Used by the pass
 * thread only, so the applier never runs concurrently with itself.
 *
 * @param <T> the store's transaction handle
 */
final class Recorder<T> {
  private static final Logger LOG = LoggerFactory.getLogger(Recorder.class);

  private final OutboxStore<T> store;
  private final ResponseApplier<T> applier;
  private final OutboxListener listener;
  private final OutcomePolicy policy;

  Recorder(OutboxStore<T> store, ResponseApplier<T> applier, OutboxListener listener,
      OutcomePolicy policy) {
    this.store = store;
    this.applier = applier;
    this.listener = listener;
    this.policy = policy;
  }

  /**
   * A decision for a row held in {@code expected}.
   *
   * @param waitsFor for a row sent the moment the command before it in its entity ended: that
   *     command's settlement; its response is applied only once that end is recorded. Else null.
   * @param settles set once this step's terminal end is committed, when a later command of the
   *     entity was sent on it; else null
   */
  record Step(OutboxRecord held, Status expected, Decision decision, Settlement waitsFor,
      Settlement settles) {
    Step(OutboxRecord held, Status expected, Decision decision) {
      this(held, expected, decision, null, null);
    }
  }

  /**
   * Whether the terminal end of a command whose successor in its entity was sent on it has been
   * committed. Used by the pass thread only.
   */
  static final class Settlement {
    private boolean settled;
  }

  /** A claim made inside a recording transaction. */
  interface ClaimInTransaction<T> {
    /**
     * Claims in {@code transaction} and returns the claimed rows to mark sending in it too, in
     * order. May run more than once when the transaction is tried again; only the last call's
     * rows are claimed.
     */
    List<OutboxRecord> claim(T transaction) throws Exception;

    /**
     * The transaction of the last {@link #claim} call committed. Called after the answers
     * recorded with it are reported and before the rows it marked sending are.
     */
    void committed();
  }

  /**
   * Writes {@code steps}, claims with {@code claim} (when not null) and marks {@code next} and the
   * claimed rows it picks sending, all in one transaction. If that fails (a row fenced off, an
   * applier that threw) nothing of it is kept: each step is then written in its own
   * transaction, and the claim and the marks are made in one more.
   *
   * @return the rows now sending, in the order given ({@code next} first)
   */
  List<OutboxRecord> recordAndMark(List<Step> answers, List<OutboxRecord> next,
      ClaimInTransaction<T> claim, Instant leaseEnd, Instant now, PassCounters counters) {
    List<Step> steps = inEntityOrder(answers, now);
    Written written = null;
    if (claim != null || steps.size() > 1 || (steps.size() == 1 && !next.isEmpty())) {
      try {
        written = store.inTransaction(tx -> writeAndMark(tx, steps, next, claim, leaseEnd, now));
      } catch (RuntimeException e) {
        LOG.debug("recording {} answers together failed; recording each alone", steps.size(), e);
      }
    }
    if (written != null) {
      for (int i = 0; i < steps.size(); i++) {
        reported(steps.get(i), written.recorded().get(i), now, counters);
      }
    } else {
      for (Step step : steps) {
        recordOne(step, now, counters);
      }
      written = claim == null && next.isEmpty() ? new Written(List.of(), 0, List.of())
          : store.inTransaction(tx -> writeAndMark(tx, List.of(), next, claim, leaseEnd, now));
    }
    if (claim != null) {
      claim.committed(); // outside the try: a failure point that throws here is not swallowed
    }
    List<OutboxRecord> sending = written.sending();
    counters.fencedOff.addAndGet(written.marked() - sending.size());
    for (OutboxRecord r : sending) {
      emit(r, Status.CLAIMED, Reason.SENDING, now);
    }
    return sending;
  }

  /** In {@code tx}: writes the steps, claims (when asked), and marks rows sending. */
  private Written writeAndMark(T tx, List<Step> steps, List<OutboxRecord> next,
      ClaimInTransaction<T> claim, Instant leaseEnd, Instant now) throws Exception {
    List<OutboxRecord> rows = new ArrayList<>(steps.size());
    for (Step step : steps) {
      rows.add(write(tx, step, now));
    }
    List<OutboxRecord> mark = next;
    if (claim != null) {
      mark = new ArrayList<>(next);
      mark.addAll(claim.claim(tx));
    }
    return new Written(rows, mark.size(), mark.isEmpty() ? List.of()
        : store.markSending(tx, mark, leaseEnd, now));
  }

  /**
   * {@code steps} with every ack that waits for an earlier command's end that is neither recorded
   * nor ending (terminal) earlier in {@code steps} turned into {@link
   * OutcomePolicy#earlierCommandUnsettled}: responses are applied in entity order.
   */
  private List<Step> inEntityOrder(List<Step> steps, Instant now) {
    List<Step> ordered = new ArrayList<>(steps.size());
    List<Settlement> endingHere = new ArrayList<>();
    for (Step step : steps) {
      Step s = endingHere.contains(step.waitsFor()) ? step : inEntityOrder(step, now);
      if (s.settles() != null && s.decision().outcome().status().isTerminal()) {
        endingHere.add(s.settles());
      }
      ordered.add(s);
    }
    return ordered;
  }

  /** {@code step}, or when it waits for an earlier end not recorded, the step not applying it. */
  private Step inEntityOrder(Step step, Instant now) {
    if (step.waitsFor() == null || step.waitsFor().settled || !step.decision().applies()) {
      return step;
    }
    return new Step(step.held(), step.expected(),
        policy.earlierCommandUnsettled(step.held(), now), null, step.settles());
  }

  /** Writes one step in its own transaction; an applier failure makes the row unknown. */
  void recordOne(Step answer, Instant now, PassCounters counters) {
    Step step = inEntityOrder(answer, now);
    OutboxRecord held = step.held();
    try {
      reported(step, store.inTransaction(tx -> write(tx, step, now)), now, counters);
    } catch (FencedOffException e) {
      counters.fencedOff.incrementAndGet();
      LOG.debug("fenced off: {}", e.getMessage());
    } catch (RuntimeException e) {
      if (!step.decision().applies()) {
        LOG.warn("recording the outcome of command {} failed; its lease will expire and it is "
            + "retried", held.commandId(), e);
        return;
      }
      LOG.warn("applying the answer to command {} failed; it will be fetched again",
          held.commandId(), e);
      recordOne(new Step(held, step.expected(), policy.applyFailed(held, e.toString(), now)), now,
          counters);
    }
  }

  /** Reports a change the store made on its own (a lease recovery), as the audit recorded it. */
  void recovered(OutboxStore.RecoveredLease recovered) {
    OutboxStore.AuditEntry change = recovered.change();
    report(new OutboxListener.Transition(change.commandId(), change.idempotencyKey(),
        recovered.command().operation(), recovered.command().entityKey(), change.from(),
        change.to(), change.fencingToken(), change.reason(), change.at()));
  }

  /** Reports a claim: the audit records it from the status the row was claimed from. */
  void claimed(OutboxRecord claimed, Instant now) {
    emit(claimed, claimed.claimedFrom(), Reason.CLAIMED, now);
  }

  /**
   * The fenced write first: a replayer that lost its lease is refused before any application
   * code runs. Row and applied state commit together, or neither.
   */
  private OutboxRecord write(T tx, Step step, Instant now) throws Exception {
    OutboxRecord held = step.held();
    OutboxRecord after = store.complete(tx, held, step.expected(), step.decision().outcome(),
        now);
    if (step.decision().applies()) {
      applier.apply(tx, after, step.decision().outcome().response());
    }
    return after;
  }

  private void reported(Step step, OutboxRecord after, Instant now, PassCounters counters) {
    if (step.settles() != null && after.status().isTerminal()) {
      step.settles().settled = true;
    }
    Reason reason = step.decision().outcome().reason();
    count(step.decision(), counters);
    emit(after, step.expected(), reason, now);
    if (step.decision().effect() == Decision.Effect.POISON) {
      try {
        listener.onPoison(after, reason);
      } catch (RuntimeException e) {
        LOG.warn("outbox listener threw; ignored", e);
      }
    }
  }

  private static void count(Decision decision, PassCounters counters) {
    var outcome = decision.outcome();
    switch (outcome.status()) {
      case ACKED -> {
        counters.acked.incrementAndGet();
        if (outcome.reason() == Reason.RECONCILED_COMMITTED) {
          counters.reconciled.incrementAndGet();
        }
      }
      case CONFLICT -> counters.conflicts.incrementAndGet();
      case REJECTED -> counters.rejected.incrementAndGet();
      case UNKNOWN -> (outcome.countsAsAttempt() ? counters.unknown : counters.released)
          .incrementAndGet();
      default -> (outcome.countsAsAttempt() ? counters.retried : counters.released)
          .incrementAndGet();
    }
  }

  private void emit(OutboxRecord after, Status from, Reason reason, Instant at) {
    report(new OutboxListener.Transition(after.commandId(), after.idempotencyKey(),
        after.operation(), after.entityKey(), from, after.status(), after.fencingToken(), reason,
        at));
  }

  private void report(OutboxListener.Transition transition) {
    try {
      listener.onTransition(transition);
    } catch (RuntimeException e) {
      LOG.warn("outbox listener threw; ignored", e);
    }
  }

  /** What one transaction of {@link #recordAndMark} wrote. */
  private record Written(List<OutboxRecord> recorded, int marked, List<OutboxRecord> sending) {}
}
