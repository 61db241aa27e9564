package dev.outboxreplay;

import java.time.Instant;

/**
 * Observes the replayer. Methods have no-op defaults; {@link #NONE} observes nothing. Called on
 * replayer threads: return quickly and never throw.
 */
public interface OutboxListener {
  OutboxListener NONE = new OutboxListener() {};

  /** A row changed status (claims included). */
  default void onTransition(Transition transition) {}

  /** A command ended as rejected because it ran out of attempts or age. */
  default void onPoison(OutboxRecord command, String reason) {}

  /** Replay paused (revoked session, refused credentials) or resumed. */
  default void onReplayPaused(String reason) {}

  /**
   * One status change.
   *
   * @param commandId the command
   * @param idempotencyKey its key
   * @param from status before
   * @param to status after
   * @param fencingToken token the change was made with
   * @param reason short code (e.g. {@code http_503}, {@code reconciled_committed})
   * @param at when
   */
  record Transition(CommandId commandId, IdempotencyKey idempotencyKey, Status from, Status to,
      long fencingToken, String reason, Instant at) {}
}
