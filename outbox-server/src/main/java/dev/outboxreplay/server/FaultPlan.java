package dev.outboxreplay.server;

import java.time.Duration;

/**
 * Faults the reference server injects, for tests and the demo: answer 5xx without processing,
 * run a hook inside the business transaction (to stall or crash it), run a hook after commit, or
 * drop the response after the effect committed. {@link #NONE} injects nothing.
 */
@FunctionalInterface
public interface FaultPlan {
  FaultPlan NONE = request -> Fault.NONE;

  /** The fault for this request, decided once when it arrives. */
  Fault onRequest(ServerRequest request);

  /**
   * One request's faults.
   *
   * @param failStatus answer this status (e.g. 503) without processing or storing; 0 for none
   * @param retryAfter {@code Retry-After} to send with {@code failStatus}, or null
   * @param beforeCommit run inside the business transaction after the handler, or null
   * @param afterCommit run after the commit, before the response is written, or null
   * @param dropResponse after the commit, close the connection without a response
   */
  record Fault(int failStatus, Duration retryAfter, Runnable beforeCommit, Runnable afterCommit,
      boolean dropResponse) {
    public static final Fault NONE = new Fault(0, null, null, null, false);

    /** Answer {@code status} with {@code Retry-After} and do nothing else. */
    public static Fault fail(int status, Duration retryAfter) {
      return new Fault(status, retryAfter, null, null, false);
    }

    /** Commit the effect, then close the connection without answering. */
    public static Fault dropResponseAfterCommit() {
      return new Fault(0, null, null, null, true);
    }

    /** Run {@code hook} inside the business transaction, before it commits. */
    public static Fault beforeCommit(Runnable hook) {
      return new Fault(0, null, hook, null, false);
    }

    /** Run {@code hook} after the commit, before answering. */
    public static Fault afterCommit(Runnable hook) {
      return new Fault(0, null, null, hook, false);
    }
  }
}
