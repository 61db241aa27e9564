package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.OutboxRecord;
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
 * The audit trail's statements: the entries a state change writes (in the caller's
 * transaction), a command's trail, and pruning by age. Table layout: {@code docs/table-layout.md}.
 */
public final class OutboxAuditSql {
  private static final String INSERT = "INSERT INTO outbox_audit (command_id, idempotency_key, "
      + "from_status, to_status, fencing_token, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?)";
  private static final String TRAIL = "SELECT command_id, idempotency_key, from_status, "
      + "to_status, fencing_token, reason, at FROM outbox_audit WHERE command_id = ? ORDER BY id";
  public static final String PRUNE = "DELETE FROM outbox_audit WHERE at < ? AND id < COALESCE("
      + "(SELECT id FROM outbox_audit WHERE at >= ? ORDER BY id LIMIT 1), " + Long.MAX_VALUE + ")";

  private final Dialect dialect;

  public OutboxAuditSql(Dialect dialect) {
    this.dialect = dialect;
  }

  /** The entry for the change of a row to {@code after} from {@code from}. */
  static AuditEntry entry(OutboxRecord after, Status from, Reason reason, Instant now) {
    return new AuditEntry(after.commandId(), after.idempotencyKey(), from, after.status(),
        after.fencingToken(), reason, now);
  }

  /**
   * Inserts {@code entries} as one JDBC batch, even a single one, in the caller's transaction:
   * the engine gets them in one call, and sqlite-jdbc, which follows every {@code executeUpdate}
   * of an {@code INSERT} with a query of {@code last_insert_rowid()} compiled anew each time,
   * runs no such query for a batch.
   */
  void write(Connection c, List<AuditEntry> entries) throws SQLException {
    if (entries.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      for (AuditEntry e : entries) {
        dialect.setId(ps, 1, e.commandId().value());
        ps.setString(2, e.idempotencyKey().value());
        ps.setString(3, e.from() == null ? null : e.from().wireName());
        ps.setString(4, e.to().wireName());
        ps.setLong(5, e.fencingToken());
        ps.setString(6, e.reason().wireName());
        ps.setLong(7, e.at().toEpochMilli());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /** The audit trail of {@code id}, oldest first. */
  public List<AuditEntry> trail(Connection c, CommandId id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(TRAIL)) {
      dialect.setId(ps, 1, id.value());
      List<AuditEntry> trail = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String from = rs.getString(3);
          trail.add(new AuditEntry(
              new CommandId(dialect.getId(rs, 1)), new IdempotencyKey(rs.getString(2)),
              from == null ? null : Status.fromWireName(from),
              Status.fromWireName(rs.getString(4)), rs.getLong(5),
              Reason.fromWireName(rs.getString(6)), Instant.ofEpochMilli(rs.getLong(7))));
        }
      }
      return trail;
    }
  }

  /**
   * Deletes the audit entries older than {@code before} that come before the first entry at or
   * after it in write ({@code id}) order. Reads only that prefix of the primary key, so the
   * audit table needs no index on {@code at}, which every insert would pay for.
   */
  public int prune(Connection c, Instant before) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PRUNE)) {
      ps.setLong(1, before.toEpochMilli());
      ps.setLong(2, before.toEpochMilli());
      return ps.executeUpdate();
    }
  }
}
