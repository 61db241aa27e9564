package dev.outboxreplay.testkit;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.SessionRuntime;

/** The default tenant's session, version 0, no credentials, until {@link #revoke()}. */
public final class RevocableSession implements SessionRuntime {
  private volatile boolean revoked;

  /** From now on the session reads as revoked (the user logged out, say). */
  public void revoke() {
    revoked = true;
  }

  @Override
  public Snapshot current() {
    return new Snapshot(HttpContract.DEFAULT_TENANT, 0, revoked, null);
  }
}
