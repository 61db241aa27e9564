package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Payload;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.jdbc.Dialect;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * Reads {@link OutboxTables#COLUMNS} into {@link OutboxRecord}s, refusing values it can't trust.
 */
public final class OutboxRows {
  private final Path file;
  private final Dialect dialect;

  public OutboxRows(Path file, Dialect dialect) {
    this.file = file;
    this.dialect = dialect;
  }

  /**
   * @throws OutboxStorageException naming the file and command when a stored value is invalid
   *     (an unknown status, a payload that does not match its hash, a malformed key)
   */
  public OutboxRecord read(ResultSet rs) throws SQLException {
    CommandId id = new CommandId(dialect.getId(rs, 2));
    try {
      String errorCode = rs.getString(16);
      int responseStatus = rs.getInt(19);
      boolean hasResponse = !rs.wasNull();
      return new OutboxRecord(
          id,
          new IdempotencyKey(rs.getString(3)),
          rs.getString(4),
          rs.getString(5),
          payload(rs),
          Status.fromWireName(rs.getString(8)),
          rs.getInt(9),
          Instant.ofEpochMilli(rs.getLong(10)),
          rs.getString(11),
          status(rs.getString(12)),
          rs.getLong(13),
          instant(rs, 14),
          rs.getLong(15),
          errorCode == null ? null
              : new ErrorInfo(errorCode, rs.getString(17), Instant.ofEpochMilli(rs.getLong(18))),
          hasResponse ? new StoredResponse(responseStatus, rs.getBytes(20)) : null,
          Instant.ofEpochMilli(rs.getLong(21)),
          Instant.ofEpochMilli(rs.getLong(22)),
          rs.getInt(23),
          rs.getLong(1),
          instant(rs, 24));
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new OutboxStorageException("outbox database " + file + " holds an unreadable row for "
          + "command " + id + ": " + e.getMessage(), e);
    }
  }

  /** A tombstone ({@code tombstoned_at} set) has only the payload's stored hash. */
  private static Payload payload(ResultSet rs) throws SQLException {
    rs.getLong(25);
    return rs.wasNull() ? Payload.ofStored(rs.getBytes(6), rs.getBytes(7))
        : Payload.ofDropped(rs.getBytes(7));
  }

  private static Status status(String wireName) {
    return wireName == null ? null : Status.fromWireName(wireName);
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : Instant.ofEpochMilli(value);
  }
}
