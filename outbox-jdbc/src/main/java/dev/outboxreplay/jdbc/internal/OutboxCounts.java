package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The outbox's counting reads ({@code outbox status}, the metrics gauges). None reads the acked
 * history: each walks an index range whose size is the rows that are not acked
 * ({@code docs/table-layout.md}, {@code idx_outbox_status}).
 */
public final class OutboxCounts {
  private OutboxCounts() {}

  /**
   * Rows per status, from one statement (one snapshot). Every status but acked is counted in its
   * own range of idx_outbox_status; acked is the table's row count, which H2 keeps, minus those.
   * The cost grows with the rows that are not acked, never with the acked history.
   */
  public static Map<Status, Long> byStatus(Connection c) throws SQLException {
    Map<Status, Long> counts = new EnumMap<>(Status.class);
    try (PreparedStatement ps = c.prepareStatement(COUNT_BY_STATUS);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      long notAcked = 0;
      for (int i = 0; i < COUNTED.size(); i++) {
        long n = rs.getLong(i + 2);
        counts.put(COUNTED.get(i), n);
        notAcked += n;
      }
      counts.put(Status.ACKED, rs.getLong(1) - notAcked);
    }
    return counts;
  }

  /** Statuses counted through idx_outbox_status; acked is the rest. */
  private static final List<Status> COUNTED = Arrays.stream(Status.values())
      .filter(s -> s != Status.ACKED).toList();
  public static final String COUNT_BY_STATUS = "SELECT (SELECT COUNT(*) FROM outbox_command)"
      + COUNTED.stream().map(s -> ", (SELECT COUNT(*) FROM outbox_command WHERE status = '"
          + s.wireName() + "')").collect(Collectors.joining());

  /** Rows in {@code status} per their last error code (rows without one are not counted). */
  public static Map<String, Long> byErrorCode(Connection c, Status status) throws SQLException {
    Map<String, Long> counts = new TreeMap<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT last_error_code, COUNT(*) "
        + "FROM outbox_command WHERE status = ? AND last_error_code IS NOT NULL "
        + "GROUP BY last_error_code")) {
      ps.setString(1, status.wireName());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          counts.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    return counts;
  }

  /**
   * Open rows are at or below {@code BLOCKED} in idx_outbox_claim, terminal rows above it: reads
   * open rows only. ({@code < MAX} would walk the terminal range to its end.)
   */
  public static String oldestOpen(Dialect dialect) {
    return "SELECT MIN(created_at) FROM outbox_command" + dialect.indexHint("idx_outbox_claim")
        + " WHERE claim_due <= " + OutboxTables.BLOCKED;
  }

  /** When the oldest command that is not terminal was accepted; empty when none is open. */
  public static Optional<Instant> oldestOpenAcceptedAt(Connection c, Dialect dialect)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(oldestOpen(dialect));
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      long at = rs.getLong(1);
      return rs.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(at));
    }
  }

}
