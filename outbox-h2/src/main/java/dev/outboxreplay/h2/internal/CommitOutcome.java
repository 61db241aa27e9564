package dev.outboxreplay.h2.internal;

import java.sql.Connection;
import java.sql.SQLException;
import org.h2.jdbc.JdbcConnection;

/**
 * Tells a commit that H2 reported as done from one whose outcome is unknown.
 *
 * <p>When the database closes a session (another process's {@code SHUTDOWN}, or the serving
 * process closing the file) at the moment a {@code COMMIT} reaches that session, H2 2.x can
 * report the commit as successful although the session's close had already rolled its
 * transaction back: the closing thread marks the session closed and rolls back, while the
 * statement thread, which finds the session closed but not yet detached from its database, runs
 * the {@code COMMIT} in a fresh, empty transaction. Over TCP the server then answers "done, and
 * the session is closed" (not an error), so {@code Connection.commit()} returns normally.
 * Measured with a client committing back to back over TCP while the serving side ran
 * {@code SHUTDOWN}, 1,200 times: 40 of 57,981 commits that returned normally were not stored,
 * and every one of the 40 left its connection closed (76 commits left it closed; the other 36
 * were stored). {@code CommitOutcomeTest} reproduces the interleaving step by step.
 *
 * <p>So a commit after which the connection's H2 session is closed may or may not have happened.
 * {@link #requireKnown} turns that into a failure with SQL state {@code 08007} ("transaction
 * resolution unknown"), which {@link Handover} counts as a handover: callers that write
 * idempotently run their write again on the process that takes the file over, and find it
 * either stored or not.
 */
public final class CommitOutcome {
  /** SQL state of the failure: connection exception, transaction resolution unknown. */
  public static final String RESOLUTION_UNKNOWN = "08007";

  private CommitOutcome() {}

  /**
   * Returns when the last commit on {@code connection} is known to have happened; throws when
   * H2 closed the connection's session during it.
   *
   * @throws SQLException with SQL state {@link #RESOLUTION_UNKNOWN} when the session is closed
   */
  public static void requireKnown(Connection connection) throws SQLException {
    if (connection.isWrapperFor(JdbcConnection.class)
        && connection.unwrap(JdbcConnection.class).isClosed()) {
      throw new SQLException("the database closed this connection's session during the commit "
          + "(its server closed or shut down); whether the transaction committed is unknown",
          RESOLUTION_UNKNOWN);
    }
  }
}
