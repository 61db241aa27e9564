package dev.outboxreplay;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Observes the replayer. Methods have no-op defaults; {@link #NONE} observes nothing. Called on
 * replayer threads: return quickly and never throw. A replayer takes several ({@link
 * ReplayerBuilder#listener} adds one each time; {@link #all} joins them elsewhere).
 */
public interface OutboxListener {
  OutboxListener NONE = new OutboxListener() {};

  /**
   * One listener that reports each event to {@code listeners}, in their order, on the calling
   * thread. One that throws is logged at WARN and the rest are still called; nothing is thrown
   * to the replayer. For metrics and a UI status line on one replayer, for example. {@link #NONE}
   * for none.
   *
   * @throws NullPointerException when {@code listeners} or one of them is null
   */
  static OutboxListener all(List<? extends OutboxListener> listeners) {
    List<OutboxListener> each = List.copyOf(Objects.requireNonNull(listeners, "listeners == null"));
    return each.isEmpty() ? NONE
        : each.size() == 1 ? each.get(0) : new dev.outboxreplay.internal.Listeners(each);
  }

  /**
   * A row changed status (claims and lease recoveries included). The replayer reports every
   * change it writes, after it commits, with the reason the audit trail records.
   */
  default void onTransition(Transition transition) {}

  /**
   * A command ended rejected without a refusal from the receiver: it ran out of attempts or age
   * ({@link Reason#POISON_MAX_ATTEMPTS}, {@link Reason#POISON_MAX_AGE}), or its outcome can no
   * longer be resolved ({@link Reason#UNRESOLVED_KEY_EXPIRED}, which {@linkplain
   * Reason#needsAttention() needs attention}). Also reported through {@link #onTransition}.
   */
  default void onPoison(OutboxRecord command, Reason reason) {}

  /**
   * Replay paused: {@link Reason#SESSION_REVOKED}, {@link Reason#CREDENTIALS_REFUSED} or
   * {@link Reason#OFFLINE}. Reported once per pause, not on every pass it holds.
   */
  default void onReplayPaused(Reason reason) {}

  /**
   * A replay pass ended (on the replayer's thread, after its writes), with what it did and how
   * long it took by the JVM's monotonic clock. For metrics; a pass that failed is not reported.
   */
  default void onPassCompleted(PassSummary summary, java.time.Duration took) {}

  /**
   * One status change.
   *
   * @param commandId the command
   * @param idempotencyKey its key
   * @param operation the command's operation (for a UI: what was being synced)
   * @param entityKey the command's entity (for a UI: which note, which document)
   * @param from status before
   * @param to status after
   * @param fencingToken token the change was made with
   * @param reason why, as recorded in the audit trail
   * @param at when
   */
  record Transition(CommandId commandId, IdempotencyKey idempotencyKey, String operation,
      String entityKey, Status from, Status to, long fencingToken, Reason reason, Instant at) {}
}
