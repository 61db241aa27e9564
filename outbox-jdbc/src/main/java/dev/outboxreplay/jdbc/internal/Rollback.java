package dev.outboxreplay.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;

/**
 * Rolls back after a failure without hiding it. When the connection broke (the process serving a
 * shared file went away), the rollback fails too, and the pool has already closed the connection
 * ("Connection is closed"): that second failure must not replace the first, which says why and
 * whether a new try may succeed.
 */
public final class Rollback {
  private Rollback() {}

  /**
   * Rolls back to {@code savepoint}, or the whole transaction when it is null, after {@code
   * cause}. A failure of the rollback itself is attached to {@code cause} as suppressed.
   *
   * @return true when the rollback worked (the connection can be used on), false when it failed
   */
  public static boolean after(Exception cause, Connection c, Savepoint savepoint) {
    try {
      if (savepoint != null) {
        c.rollback(savepoint);
      } else {
        c.rollback();
      }
      return true;
    } catch (SQLException rollbackFailed) {
      if (rollbackFailed != cause) {
        cause.addSuppressed(rollbackFailed);
      }
      return false;
    }
  }
}
