package dev.outboxreplay.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import dev.outboxreplay.jdbc.Dialect;

/**
 * The history retention of the outbox table ({@code docs/table-layout.md}): ended commands
 * become tombstones, and tombstones are deleted with their audit entries. Each reads one range of
 * {@code idx_outbox_claim}, where terminal rows sit at {@link OutboxSchema#ENDED} and tombstones
 * at {@link OutboxSchema#TOMBSTONED}, each plus its end time: only rows that ended before the
 * cutoff are read, however long the history, oldest first, a batch per transaction, so an accept
 * waits at most one batch.
 */
public final class OutboxRetention {
  /** Rows per transaction: a batch that changes fewer was the last one. */
  public static final int BATCH = 500;
  /** Rows whose claim_due lies in [base, base + cutoff): base is ENDED or TOMBSTONED. */
  public static String ended(Dialect dialect) {
    return "SELECT command_id FROM outbox_command" + dialect.indexHint("idx_outbox_claim")
        + " WHERE claim_due >= ? AND claim_due < ? ORDER BY claim_due, seq LIMIT " + BATCH;
  }
  /**
   * Keeps id, key, operation, entity, payload hash, status, attempts, times, response status and
   * error code; drops the payload bytes, the response body and the error message. The outer
   * conditions are checked again on the locked row: an operator requeue that won the race keeps
   * its payload.
   */
  static final String TOMBSTONE = "UPDATE outbox_command SET payload = X'', "
      + "response_body = NULL, last_error_message = NULL, tombstoned_at = ? "
      + "WHERE command_id = ? AND terminal = TRUE AND tombstoned_at IS NULL";
  private static final String DELETE_AUDIT = "DELETE FROM outbox_audit WHERE command_id = ?";
  private static final String DELETE = "DELETE FROM outbox_command "
      + "WHERE command_id = ? AND terminal = TRUE AND tombstoned_at IS NOT NULL";

  private final Dialect dialect;
  private final String ended;

  public OutboxRetention(Dialect dialect) {
    this.dialect = dialect;
    this.ended = ended(dialect);
  }

  /** One batch of commands that ended before {@code endedBefore} and are not tombstones yet. */
  public List<UUID> endedNotTombstoned(Connection c, Instant endedBefore)
      throws SQLException {
    return ids(c, OutboxTables.ENDED, endedBefore);
  }

  /** One batch of tombstones of commands that ended before {@code endedBefore}. */
  public List<UUID> tombstonesEnded(Connection c, Instant endedBefore)
      throws SQLException {
    return ids(c, OutboxTables.TOMBSTONED, endedBefore);
  }

  /** Turns {@code ids} into tombstones; the caller commits. @return rows changed */
  public int tombstone(Connection c, List<UUID> ids, Instant now) throws SQLException {
    if (ids.isEmpty()) {
      return 0;
    }
    try (PreparedStatement ps = c.prepareStatement(TOMBSTONE)) {
      for (UUID id : ids) {
        ps.setLong(1, now.toEpochMilli());
        dialect.setId(ps, 2, id);
        ps.addBatch();
      }
      return sum(ps.executeBatch());
    }
  }

  /** Deletes the tombstones {@code ids} and their audit entries; the caller commits. */
  public int delete(Connection c, List<UUID> ids) throws SQLException {
    int deleted = 0;
    try (PreparedStatement audit = c.prepareStatement(DELETE_AUDIT);
        PreparedStatement row = c.prepareStatement(DELETE)) {
      for (UUID id : ids) {
        dialect.setId(row, 1, id);
        if (row.executeUpdate() == 1) {
          dialect.setId(audit, 1, id);
          audit.executeUpdate();
          deleted++;
        }
      }
    }
    return deleted;
  }

  private List<UUID> ids(Connection c, long base, Instant endedBefore)
      throws SQLException {
    List<UUID> ids = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(ended)) {
      ps.setLong(1, base);
      ps.setLong(2, base + Math.max(0, endedBefore.toEpochMilli()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(dialect.getId(rs, 1));
        }
      }
    }
    return ids;
  }

  private static int sum(int[] counts) {
    int total = 0;
    for (int n : counts) {
      total += Math.max(n, 0);
    }
    return total;
  }
}
