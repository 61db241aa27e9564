package dev.outboxreplay;

import java.util.Locale;
import java.util.Map;

/**
 * Where an outbox row is in its life. The names returned by {@link #wireName()} (and {@link
 * #toString()}) are what the store writes to disk and what the command-line tool prints; they
 * never change meaning.
 *
 * <p>Which moves between statuses are legal is decided by {@link StateMachine} alone.
 */
public enum Status {
  /** Accepted and durable, never attempted, waiting for its due time. */
  QUEUED,
  /** Handed to one replayer under a lease and fencing token; nothing sent yet. */
  CLAIMED,
  /** The replayer is sending it; the request may reach the server from here on. */
  SENDING,
  /** An attempt failed in a way known to be safe to retry; waits for {@code next_attempt_at}. */
  RETRYABLE_FAILED,
  /** An attempt may or may not have reached the server; resolve by reconciliation or resend. */
  UNKNOWN,
  /** The server confirmed the business effect. Terminal. */
  ACKED,
  /** The server refused it as conflicting (business conflict or key reuse). Terminal. */
  CONFLICT,
  /** The server refused it for good, or it was poisoned by max attempts or age. Terminal. */
  REJECTED;

  /** Computed once: the store writes it for every status change. */
  private final String wireName = name().toLowerCase(Locale.ROOT);

  /** True for statuses only an operator action may leave: acked, conflict, rejected. */
  public boolean isTerminal() {
    return this == ACKED || this == CONFLICT || this == REJECTED;
  }

  /**
   * How many rows are still open (not terminal) in counts such as
   * {@link OutboxStore#countByStatus()}'s.
   */
  public static long countOpen(Map<Status, Long> countsByStatus) {
    long open = 0;
    for (Map.Entry<Status, Long> e : countsByStatus.entrySet()) {
      if (!e.getKey().isTerminal()) {
        open += e.getValue();
      }
    }
    return open;
  }

  /** Counts with every status at zero, in status order: an empty outbox's. */
  public static Map<Status, Long> zeroCounts() {
    Map<Status, Long> counts = new java.util.EnumMap<>(Status.class);
    for (Status s : values()) {
      counts.put(s, 0L);
    }
    return counts;
  }

  /** Lower-case name stored in the database and printed by tools, e.g. {@code retryable_failed}. */
  public String wireName() {
    return wireName;
  }

  /**
   * The {@linkplain #wireName() wire name}, so that statuses and counts print as the database
   * stores them and the tools show them ({@code {queued=1, acked=2}}). {@link #name()} stays the
   * Java constant's name.
   */
  @Override
  public String toString() {
    return wireName();
  }

  /**
   * The status with the given {@linkplain #wireName() wire name}.
   *
   * @throws IllegalArgumentException naming the value and the valid names when it is not one
   */
  public static Status fromWireName(String name) {
    for (Status status : values()) {
      if (status.wireName().equals(name)) {
        return status;
      }
    }
    throw new IllegalArgumentException("unknown status '" + name + "'; expected one of "
        + "queued, claimed, sending, retryable_failed, unknown, acked, conflict, rejected");
  }
}
