package dev.outboxreplay.internal.replay;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Status;
import dev.outboxreplay.internal.replay.Recorder.Settlement;
import dev.outboxreplay.internal.replay.Recorder.Step;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A pass's successors: for a row whose request is in flight, the next command of its entity,
 * claimed and marked sending behind it so that it can leave the moment that row ends. Tracks the
 * rows handed to senders (whose successors the next recording claims), the successors waiting
 * for an answer, the ones released to the senders, and for each released one the settlement of
 * the end it waits for before its ack is applied. Used by the pass thread only.
 */
final class Successors {
  /** Rows handed to senders since the last recording: their successors are claimed in the next. */
  private final List<OutboxRecord> startedSinceRecording = new ArrayList<>();
  /** Rows handed to senders whose answer is not collected yet. */
  private final Set<CommandId> inFlight = new HashSet<>();
  /** The successor marked sending behind an in-flight row, by that row's id. */
  private final Map<CommandId, OutboxRecord> waiting = new HashMap<>();
  /** Successors whose earlier command ended: handed to senders before any primed row. */
  private final Deque<OutboxRecord> released = new ArrayDeque<>();
  /** For a released successor's id: the settlement of the end its answer waits for. */
  private final Map<CommandId, Settlement> waitsFor = new HashMap<>();

  /** A decision's step, and the step giving back a successor that may not leave, or null. */
  record Answered(Step step, Step givenBack) {}

  /** {@code row} was handed to a sender. */
  void started(OutboxRecord row) {
    inFlight.add(row.commandId());
    startedSinceRecording.add(row);
  }

  /** The answer for the row {@code id} came back. */
  void returned(CommandId id) {
    inFlight.remove(id);
  }

  /** True when rows were handed to senders since the last recording. */
  boolean startedSinceRecording() {
    return !startedSinceRecording.isEmpty();
  }

  /**
   * The rows handed to senders since the last recording that are still in flight, whose
   * successors the recording now being made claims; none when {@code wanted} is false (their
   * successors are then never looked for). Either way the next recording starts a new list.
   */
  List<OutboxRecord> toFollow(boolean wanted) {
    List<OutboxRecord> follow = new ArrayList<>();
    if (wanted) {
      for (OutboxRecord r : startedSinceRecording) {
        if (inFlight.contains(r.commandId())) {
          follow.add(r);
        }
      }
    }
    startedSinceRecording.clear();
    return follow;
  }

  /** {@code next}, now sending, waits behind the in-flight row {@code earlier}. */
  void markedBehind(CommandId earlier, OutboxRecord next) {
    waiting.put(earlier, next);
  }

  /**
   * The step that records {@code decision} for {@code held}. A successor waiting behind {@code
   * held} is released to the senders when the decision ends {@code held}, and its answer will
   * wait for that end to be committed; otherwise it is given back with {@code giveBack}'s
   * decision.
   */
  Answered answered(OutboxRecord held, Status expected, Decision decision,
      Function<OutboxRecord, Decision> giveBack) {
    OutboxRecord next = waiting.remove(held.commandId());
    Settlement settles = null;
    if (next != null && decision.outcome().status().isTerminal()) {
      settles = new Settlement();
      waitsFor.put(next.commandId(), settles);
      released.add(next);
    }
    Step step = new Step(held, expected, decision, waitsFor.remove(held.commandId()), settles);
    Step givenBack = next != null && settles == null
        ? new Step(next, Status.SENDING, giveBack.apply(next)) : null;
    return new Answered(step, givenBack);
  }

  /** True when a released successor waits for a free sender. */
  boolean anyReleased() {
    return !released.isEmpty();
  }

  /** The oldest released successor, or null. */
  OutboxRecord pollReleased() {
    return released.poll();
  }

  /** {@code row}, marked sending, is given back unsent: its answer waits for nothing. */
  void givenBack(OutboxRecord row) {
    waitsFor.remove(row.commandId());
  }

  /**
   * Every successor marked sending and not handed to a sender: the released ones, and when
   * {@code noneInFlight} (no answer is to come in this pass) the waiting ones too.
   */
  List<OutboxRecord> unsent(boolean noneInFlight) {
    List<OutboxRecord> unsent = new ArrayList<>(released);
    released.clear();
    if (noneInFlight) {
      unsent.addAll(waiting.values());
      waiting.clear();
    }
    return unsent;
  }
}
