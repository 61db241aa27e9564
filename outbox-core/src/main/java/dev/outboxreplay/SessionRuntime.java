package dev.outboxreplay;

import java.util.Objects;

/**
 * The application's session as the replayer sees it: tenant, a version that grows when the user
 * signs in again or switches account, whether the session is revoked (logout), and the current
 * credentials. Thread-safe; {@link #current()} is called often and must be cheap.
 */
@FunctionalInterface
public interface SessionRuntime {
  /** A single-user session at version 0 that is never revoked and has no credentials. */
  SessionRuntime ANONYMOUS = () -> new Snapshot(HttpContract.DEFAULT_TENANT, 0, false, null);

  /** The session now. */
  Snapshot current();

  /**
   * The session at one moment.
   *
   * @param tenant the tenant commands are sent for
   * @param version the session version; commands accepted under an older one are stale
   * @param revoked true after logout or revocation: replay stops at once
   * @param credentials the bearer token to send, or null
   */
  record Snapshot(String tenant, long version, boolean revoked, String credentials) {
    public Snapshot {
      Objects.requireNonNull(tenant, "tenant");
    }

    /**
     * The response fence: an answer obtained under {@code sentUnder} may change local state now
     * only if the session is still the same tenant, has not moved to a newer version, and is not
     * revoked.
     */
    public boolean admits(Snapshot sentUnder) {
      return !revoked && tenant.equals(sentUnder.tenant) && version <= sentUnder.version;
    }

    /** Names the tenant and version; never prints the credentials. */
    @Override
    public String toString() {
      return "Snapshot[tenant=" + tenant + ", version=" + version + ", revoked=" + revoked
          + ", credentials=" + (credentials == null ? "none" : "(redacted)") + "]";
    }
  }
}
