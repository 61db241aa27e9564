package dev.outboxreplay.receiver;

import dev.outboxreplay.OutboxException;

/**
 * A completion or failure carried a claim whose lease had expired and another node took the key
 * over (its fencing token is larger) or finished it. Nothing was committed, the request's effect
 * included; the node that holds the key now answers it.
 */
public final class KeyTakenOverException extends OutboxException {
  private static final long serialVersionUID = 1L;

  public KeyTakenOverException(Claim.Owned claim) {
    super("idempotency key " + claim.tenant() + "/" + claim.key() + " was taken over by "
        + "another node (this claim's fence " + claim.fence() + " is no longer current); "
        + "nothing committed");
  }
}
