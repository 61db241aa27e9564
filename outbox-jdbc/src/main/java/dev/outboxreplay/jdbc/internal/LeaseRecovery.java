package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore.RecoveredLease;
import dev.outboxreplay.Status;
import dev.outboxreplay.internal.LeaseExpiry;
import dev.outboxreplay.jdbc.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Ends the leases that ran out (see {@code OutboxStore#recoverExpiredLeases}), writing what
 * {@link LeaseExpiry} decides for each row: a sending row becomes unknown (its request may have
 * reached the server), a claimed row goes back, unsent, to the status it was claimed from. The
 * expired rows are read from the expired range of idx_outbox_status ({@code status,
 * lease_expires_at}), never a due queued row however long the backlog, and each is then recovered
 * by an update fenced like every other state change. One UPDATE over the expired range let H2
 * 2.5.252 recover a row that an ack had changed and committed meanwhile (both outcomes were
 * audited, and the answer was applied again after the resend); {@code AckRecoveryRaceTest} caught
 * it in 46 of 2,400 races.
 */
public final class LeaseRecovery {
  /** The rows in a held status whose lease ended. */
  public static final String EXPIRED = "SELECT command_id, fencing_token, claimed_from "
      + "FROM outbox_command WHERE status = ? AND lease_expires_at <= ?";

  private final OutboxRows rows;
  private final OutboxSql sql;
  private final Dialect dialect;
  private final String recover;

  public LeaseRecovery(OutboxRows rows, OutboxSql sql, Dialect dialect) {
    this.rows = rows;
    this.sql = sql;
    this.dialect = dialect;
    this.recover = dialect.updateReturning("UPDATE outbox_command SET status = ?, "
        + "attempt = attempt + ?, next_attempt_at = ?, "
        + "first_sent_at = CASE WHEN ? = 1 THEN COALESCE(first_sent_at, ?) "
        + "ELSE first_sent_at END, "
        + "claim_owner = NULL, claimed_from = NULL, lease_expires_at = NULL, "
        + "last_error_code = CASE WHEN ? = 1 THEN ? ELSE last_error_code END, "
        + "last_error_message = CASE WHEN ? = 1 THEN ? ELSE last_error_message END, "
        + "last_error_at = CASE WHEN ? = 1 THEN ? ELSE last_error_at END, updated_at = ? "
        + "WHERE lease_expires_at <= ? AND " + OutboxSql.FENCE, OutboxTables.COLUMNS);
  }

  /**
   * Recovers every lease that ran out at or before {@code now}. The caller commits.
   *
   * @return each row changed, with the change as audited
   */
  public List<RecoveredLease> recover(Connection c, Instant now) throws SQLException {
    List<RecoveredLease> changes = new ArrayList<>();
    recover(c, Status.SENDING, now, changes);
    recover(c, Status.CLAIMED, now, changes);
    return changes;
  }

  /** A row whose lease ended, as read; recovered only if it is still so when updated. */
  private record Expired(CommandId id, long token, Status claimedFrom) {}

  /** Recovers the rows held in {@code held} whose lease ended, each as {@link LeaseExpiry} says. */
  private void recover(Connection c, Status held, Instant now, List<RecoveredLease> changes)
      throws SQLException {
    long at = now.toEpochMilli();
    List<Expired> expired = expired(c, held, at);
    if (expired.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(recover)) {
      for (Expired e : expired) {
        LeaseExpiry decision = LeaseExpiry.of(held, e.claimedFrom(), now);
        ErrorInfo error = decision.error();
        int error1 = error != null ? 1 : 0;
        ps.setString(1, decision.next().wireName());
        ps.setInt(2, decision.countsAsAttempt() ? 1 : 0);
        ps.setLong(3, decision.dueAt().toEpochMilli());
        ps.setInt(4, decision.mayHaveReachedReceiver() ? 1 : 0);
        ps.setLong(5, at);
        ps.setInt(6, error1);
        ps.setString(7, error != null ? error.code() : null);
        ps.setInt(8, error1);
        ps.setString(9, error != null ? error.message() : null);
        ps.setInt(10, error1);
        ps.setLong(11, error != null ? error.at().toEpochMilli() : 0);
        ps.setLong(12, at);
        ps.setLong(13, at);
        sql.bindCas(ps, 14, e.id(), held, e.token());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            OutboxRecord after = rows.read(rs);
            changes.add(new RecoveredLease(after,
                sql.audit(c, after, held, decision.reason(), now)));
          }
        }
      }
    }
  }

  private List<Expired> expired(Connection c, Status held, long at) throws SQLException {
    List<Expired> expired = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(EXPIRED)) {
      ps.setString(1, held.wireName());
      ps.setLong(2, at);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String from = rs.getString(3);
          expired.add(new Expired(new CommandId(dialect.getId(rs, 1)), rs.getLong(2),
              from == null ? null : Status.fromWireName(from)));
        }
      }
    }
    return expired;
  }
}
