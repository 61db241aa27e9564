package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxStore.AuditEntry;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Ends the leases that ran out (see {@code OutboxStore#recoverExpiredLeases}): a sending row
 * becomes unknown (its request may have reached the server), a claimed row goes back, unsent, to
 * the status it was claimed from. The expired rows are read from the expired range of
 * idx_outbox_status ({@code status, lease_expires_at}), never a due queued row however long the
 * backlog, and each is then recovered by an update fenced like every other state change. One
 * UPDATE over the expired range let H2 2.5.252 recover a row that an ack had changed and committed
 * meanwhile (both outcomes were audited, and the answer was applied again after the resend);
 * {@code AckRecoveryRaceTest} caught it in 46 of 2,400 races.
 */
public final class LeaseRecovery {
  /** The rows in a held status whose lease ended. */
  public static final String EXPIRED = "SELECT command_id, fencing_token FROM outbox_command "
      + "WHERE status = ? AND lease_expires_at <= ?";

  private final OutboxRows rows;
  private final OutboxSql sql;
  private final Dialect dialect;
  private final String recoverSending;
  private final String recoverClaimed;

  public LeaseRecovery(OutboxRows rows, OutboxSql sql, Dialect dialect) {
    this.rows = rows;
    this.sql = sql;
    this.dialect = dialect;
    this.recoverSending = dialect.updateReturning("UPDATE outbox_command SET status = 'unknown', "
        + "attempt = attempt + 1, next_attempt_at = ?, "
        + "first_sent_at = COALESCE(first_sent_at, ?), "
        + "claim_owner = NULL, claimed_from = NULL, lease_expires_at = NULL, "
        + "last_error_code = 'lease_expired_while_sending', "
        + "last_error_message = 'the sender stopped before recording an outcome; "
        + "the request may have reached the server', last_error_at = ?, updated_at = ? "
        + "WHERE lease_expires_at <= ? AND " + OutboxSql.FENCE, OutboxTables.COLUMNS);
    this.recoverClaimed = dialect.updateReturning("UPDATE outbox_command SET "
        + "status = claimed_from, next_attempt_at = ?, claim_owner = NULL, claimed_from = NULL, "
        + "lease_expires_at = NULL, updated_at = ? WHERE lease_expires_at <= ? AND "
        + OutboxSql.FENCE, OutboxTables.COLUMNS);
  }

  /**
   * Recovers every lease that ran out at or before {@code now}. The caller commits.
   *
   * @return the changes, as audited
   */
  public List<AuditEntry> recover(Connection c, Instant now) throws SQLException {
    List<AuditEntry> changes = new ArrayList<>();
    recover(c, Status.SENDING, recoverSending, 5, Reason.LEASE_EXPIRED_WHILE_SENDING, now,
        changes);
    recover(c, Status.CLAIMED, recoverClaimed, 3, Reason.LEASE_EXPIRED_WHILE_CLAIMED, now,
        changes);
    return changes;
  }

  /** A row whose lease ended, as read; recovered only if it is still so when updated. */
  private record Expired(CommandId id, long token) {}

  /**
   * Recovers the expired rows in {@code held} with {@code update}, whose first {@code times}
   * parameters are the time and whose last are the fence.
   */
  private void recover(Connection c, Status held, String update, int times, Reason reason,
      Instant now, List<AuditEntry> changes) throws SQLException {
    long at = now.toEpochMilli();
    List<Expired> expired = expired(c, held, at);
    if (expired.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(update)) {
      for (int i = 1; i <= times; i++) {
        ps.setLong(i, at);
      }
      for (Expired e : expired) {
        sql.bindCas(ps, times + 1, e.id(), held, e.token());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            changes.add(sql.audit(c, rows.read(rs), held, reason, now));
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
          expired.add(new Expired(new CommandId(dialect.getId(rs, 1)), rs.getLong(2)));
        }
      }
    }
    return expired;
  }
}
