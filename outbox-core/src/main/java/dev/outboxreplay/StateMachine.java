package dev.outboxreplay;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The one table of legal status moves. Stores consult it before every write and enforce it again
 * in SQL ({@code UPDATE ... WHERE status = ?}), so an illegal move can neither be asked for nor
 * slip through a race.
 *
 * <pre>
 * queued ----------&gt; claimed
 * retryable_failed -&gt; claimed | rejected (poison)
 * unknown ---------&gt; claimed | rejected (poison)
 * claimed ---------&gt; claimed (expired lease taken over) | sending
 *                   | queued, retryable_failed, unknown (lease released unsent)
 *                   | acked (reconciled) | conflict | rejected
 * sending ---------&gt; acked | conflict | rejected | retryable_failed | unknown
 * conflict, rejected --(operator requeue, audited)--&gt; queued
 * acked: final
 * </pre>
 *
 * <p>Thread-safe: immutable.
 */
public final class StateMachine {
  private static final Map<Status, Set<Status>> ENGINE = new EnumMap<>(Status.class);
  private static final Map<Status, Set<Status>> OPERATOR = new EnumMap<>(Status.class);

  static {
    ENGINE.put(Status.QUEUED, EnumSet.of(Status.CLAIMED));
    ENGINE.put(Status.RETRYABLE_FAILED, EnumSet.of(Status.CLAIMED, Status.REJECTED));
    ENGINE.put(Status.UNKNOWN, EnumSet.of(Status.CLAIMED, Status.REJECTED));
    ENGINE.put(Status.CLAIMED, EnumSet.of(Status.CLAIMED, Status.SENDING, Status.QUEUED,
        Status.RETRYABLE_FAILED, Status.UNKNOWN, Status.ACKED, Status.CONFLICT, Status.REJECTED));
    ENGINE.put(Status.SENDING, EnumSet.of(Status.ACKED, Status.CONFLICT, Status.REJECTED,
        Status.RETRYABLE_FAILED, Status.UNKNOWN));
    ENGINE.put(Status.ACKED, EnumSet.noneOf(Status.class));
    ENGINE.put(Status.CONFLICT, EnumSet.noneOf(Status.class));
    ENGINE.put(Status.REJECTED, EnumSet.noneOf(Status.class));
    for (Status status : Status.values()) {
      OPERATOR.put(status, EnumSet.noneOf(Status.class));
    }
    OPERATOR.put(Status.CONFLICT, EnumSet.of(Status.QUEUED));
    OPERATOR.put(Status.REJECTED, EnumSet.of(Status.QUEUED));
  }

  private StateMachine() {}

  /** True when the replay engine may move a row from {@code from} to {@code to}. */
  public static boolean isAllowed(Status from, Status to) {
    return ENGINE.get(from).contains(to);
  }

  /** True when only an explicit, audited operator action may move a row this way. */
  public static boolean isOperatorAction(Status from, Status to) {
    return OPERATOR.get(from).contains(to);
  }

  /** The statuses the engine may move a row to from {@code from}; unmodifiable. */
  public static Set<Status> allowedFrom(Status from) {
    return Collections.unmodifiableSet(ENGINE.get(from));
  }

  /** The statuses from which the engine may move a row to {@code to}. */
  public static Set<Status> allowedInto(Status to) {
    EnumSet<Status> result = EnumSet.noneOf(Status.class);
    for (Map.Entry<Status, Set<Status>> entry : ENGINE.entrySet()) {
      if (entry.getValue().contains(to)) {
        result.add(entry.getKey());
      }
    }
    return result;
  }

  /**
   * Checks an engine move.
   *
   * @throws IllegalStateException naming both statuses when the table does not allow it
   */
  public static void requireAllowed(Status from, Status to) {
    if (!isAllowed(from, to)) {
      throw new IllegalStateException(
          "illegal outbox transition " + from.wireName() + " -> " + to.wireName());
    }
  }
}
