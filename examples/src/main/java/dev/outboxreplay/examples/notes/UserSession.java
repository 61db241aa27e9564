package dev.outboxreplay.examples.notes;

import dev.outboxreplay.SessionRuntime;

/**
 * Who is signed in, as the replayer reads it before each request: the user is the tenant, the
 * token the bearer credentials; signed out reads as revoked, and replay pauses. Thread-safe.
 */
final class UserSession implements SessionRuntime {
  private volatile Snapshot current = new Snapshot("nobody", 0, true, null);

  void signIn(String user, String token) {
    current = new Snapshot(user, 0, false, token);
  }

  void signOut() {
    Snapshot was = current;
    current = new Snapshot(was.tenant(), was.version(), true, null);
  }

  boolean signedIn() {
    return !current.revoked();
  }

  @Override
  public Snapshot current() {
    return current;
  }
}
