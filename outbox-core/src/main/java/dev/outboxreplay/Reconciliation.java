package dev.outboxreplay;

import java.util.Objects;

/**
 * What the receiver knows about an idempotency key, from its reconciliation endpoint
 * ({@link HttpContract#RECONCILE_PATH}).
 *
 * @param state the key's state at the receiver
 * @param response the stored answer when {@code COMMITTED}, else null
 * @param error the receiver's error text when {@code FAILED}, else null
 */
public record Reconciliation(State state, StoredResponse response, String error) {
  public Reconciliation {
    Objects.requireNonNull(state, "state");
    if (state == State.COMMITTED) {
      Objects.requireNonNull(response, "a committed reconciliation carries the stored response");
    }
  }

  /** The receiver's view of a key. */
  public enum State {
    /** Never seen (or expired): the request did not take effect; resend with the same key. */
    NOT_SEEN,
    /** Being processed now: ask again later. */
    PROCESSING,
    /** Took effect; {@link #response()} is the stored answer. */
    COMMITTED,
    /** Processing failed and took no effect: resend with the same key. */
    FAILED
  }

  public static Reconciliation notSeen() {
    return new Reconciliation(State.NOT_SEEN, null, null);
  }

  public static Reconciliation processing() {
    return new Reconciliation(State.PROCESSING, null, null);
  }

  public static Reconciliation committed(StoredResponse response) {
    return new Reconciliation(State.COMMITTED, response, null);
  }

  public static Reconciliation failed(String error) {
    return new Reconciliation(State.FAILED, null, error);
  }
}
