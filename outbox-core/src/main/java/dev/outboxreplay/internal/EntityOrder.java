package dev.outboxreplay.internal;

import dev.outboxreplay.Status;
import java.time.Instant;
import java.util.Objects;

/**
 * The order of an entity's commands, decided in one place. Commands that share an entity key are
 * sent in the order they were accepted: only the entity's <em>head</em>, its oldest open
 * command, is claimed from the due rows; while the head's request is in flight its
 * <em>successor</em>, the next open command, may be claimed and lined up behind it; and when the
 * head ends (acked, conflict, rejected) the oldest open command left becomes the head.
 *
 * <p>A store finds the facts (whether an earlier command of a row's entity is open; the status,
 * due time and session of the command after one in flight) and acts on these answers; it
 * decides nothing about the order itself. Pure functions of their arguments; thread-safe.
 */
public final class EntityOrder {
  private EntityOrder() {}

  /**
   * Whether a claim may take a due row: only when no command of its entity accepted before it is
   * still open (not acked, conflict or rejected). A row it may not take waits behind its
   * entity's head; the store marks it so, and later claims skip it until the head ends.
   */
  public static boolean mayClaim(boolean earlierCommandOpen) {
    return !earlierCommandOpen;
  }

  /**
   * Whether the command right after one in flight in its entity's accept order may be claimed
   * as its successor, to go out the moment the one in flight ends: only a command never
   * attempted ({@code queued}; one that was attempted waits for its own retry time and is
   * reconciled or resent as a head), already due, and accepted under the current session or a
   * later one (an older session's command is checked by the session fence as a head first).
   *
   * @param next the status of the entity's next open command
   * @param nextDueAt when it is due
   * @param nextSessionVersion the session version it was accepted under
   * @param sessionVersion the current session version
   * @param now the time of the claim
   */
  public static boolean mayFollow(Status next, Instant nextDueAt, long nextSessionVersion,
      long sessionVersion, Instant now) {
    Objects.requireNonNull(next, "next");
    Objects.requireNonNull(nextDueAt, "nextDueAt");
    Objects.requireNonNull(now, "now");
    return next == Status.QUEUED && !nextDueAt.isAfter(now)
        && nextSessionVersion >= sessionVersion;
  }

  /**
   * Whether a command that moves to {@code to} stops being its entity's head, so that the oldest
   * open command left takes its place: when it ends (acked, conflict, rejected). A command that
   * will be retried or reconciled stays the head.
   */
  public static boolean endsHead(Status to) {
    return Objects.requireNonNull(to, "to").isTerminal();
  }
}
