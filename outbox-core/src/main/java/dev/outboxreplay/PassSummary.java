package dev.outboxreplay;

/**
 * What one replay pass did.
 *
 * @param claimed rows claimed
 * @param acked rows acked (reconciled ones included)
 * @param reconciled rows found committed by reconciliation instead of resending
 * @param retried rows that failed retryably or in progress
 * @param unknown rows whose outcome became unknown
 * @param conflicts rows ended as conflict
 * @param rejected rows ended as rejected (poison included)
 * @param released rows given back unsent (held, paused, processing elsewhere)
 * @param fencedOff writes refused because another replayer took the row over
 * @param pausedReason why replay is paused after this pass, or null
 */
public record PassSummary(int claimed, int acked, int reconciled, int retried, int unknown,
    int conflicts, int rejected, int released, int fencedOff, Reason pausedReason) {

  /** True when the pass claimed nothing. */
  public boolean idle() {
    return claimed == 0;
  }
}
