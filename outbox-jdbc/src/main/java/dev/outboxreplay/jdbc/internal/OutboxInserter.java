package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.IdempotencyConflictException;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.PreparedCommand;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Writes accepted commands. The common case (new ids, new keys) is a plain insert with no lookup;
 * only a unique-key violation makes it roll back to its savepoint and resolve each command
 * against what is stored: same intent returns the stored row, a different intent is an
 * {@link IdempotencyConflictException} and the whole batch is undone.
 */
public final class OutboxInserter
    implements GroupCommitter.GroupWriter<List<PreparedCommand>, List<OutboxRecord>> {
  private static final String INSERT = "INSERT INTO outbox_command (command_id, idempotency_key, "
      + "operation, entity_key, payload, payload_hash, status, attempt, next_attempt_at, "
      + "fencing_token, session_version, created_at, updated_at, schema_version, entity_head) "
      + "VALUES (?, ?, ?, ?, ?, ?, 'queued', 0, ?, 0, ?, ?, ?, " + OutboxTables.ROW_FORMAT
      + ", TRUE)";
  private static final String BY_ID =
      "SELECT " + OutboxTables.COLUMNS + " FROM outbox_command WHERE command_id = ?";
  private static final String BY_KEY =
      "SELECT " + OutboxTables.COLUMNS + " FROM outbox_command WHERE idempotency_key = ?";

  private final OutboxRows rows;
  private final Dialect dialect;

  public OutboxInserter(OutboxRows rows, Dialect dialect) {
    this.rows = rows;
    this.dialect = dialect;
  }

  /**
   * Inserts every command of every batch as new rows in one JDBC batch. Throws on any unique
   * violation, possibly leaving some rows written: the caller rolls back and uses
   * {@link #writeOne}.
   */
  @Override
  public List<List<OutboxRecord>> writeAll(Connection c, List<List<PreparedCommand>> batches)
      throws SQLException {
    List<PreparedCommand> all = new ArrayList<>();
    for (List<PreparedCommand> batch : batches) {
      all.addAll(batch);
    }
    List<OutboxRecord> written = insertNew(c, all);
    List<List<OutboxRecord>> result = new ArrayList<>(batches.size());
    int from = 0;
    for (List<PreparedCommand> batch : batches) {
      result.add(written.subList(from, from + batch.size()));
      from += batch.size();
    }
    return result;
  }

  @Override
  public List<OutboxRecord> writeOne(Connection c, List<PreparedCommand> batch)
      throws SQLException {
    return insert(c, batch);
  }

  /** Inserts {@code batch} in the connection's open transaction; see the class comment. */
  public List<OutboxRecord> insert(Connection c, List<PreparedCommand> batch) throws SQLException {
    // One row is one statement: where a failed statement undoes itself, it needs no savepoint
    // (on SQLite a savepoint is a statement compiled each time: 5-13 us of an accept's ~80).
    Savepoint start = batch.size() == 1 && dialect.failedStatementLeavesTransactionIntact()
        ? null : c.setSavepoint();
    try {
      return insertNew(c, batch);
    } catch (SQLException | RuntimeException e) {
      if (!undo(e, c, start)
          || !(e instanceof SQLException sql) || !dialect.isUniqueViolation(sql)) {
        throw e;
      }
    }
    try {
      List<OutboxRecord> result = new ArrayList<>(batch.size());
      for (PreparedCommand command : batch) {
        result.add(insertOrResolve(c, command));
      }
      return result;
    } catch (SQLException | RuntimeException e) {
      undo(e, c, start);
      throw e;
    }
  }

  /**
   * Undoes what a failed {@link #insert} wrote: back to {@code start}, or nothing when there is
   * none (a single row, whose one statement undid itself). False when the connection broke.
   */
  private static boolean undo(Exception e, Connection c, Savepoint start) {
    return start == null || Rollback.after(e, c, start);
  }

  private OutboxRecord insertOrResolve(Connection c, PreparedCommand command) throws SQLException {
    Optional<OutboxRecord> existing = findExisting(c, command);
    if (existing.isPresent()) {
      return resolve(command, existing.get());
    }
    Savepoint before = c.setSavepoint();
    try {
      return insertNew(c, List.of(command)).get(0);
    } catch (SQLException e) {
      if (!dialect.isUniqueViolation(e)) {
        throw e;
      }
      // Another process committed the same id or key between our lookup and insert.
      if (!Rollback.after(e, c, before)) {
        throw e;
      }
      return resolve(command, findExisting(c, command).orElseThrow(() -> e));
    }
  }

  private static OutboxRecord resolve(PreparedCommand command, OutboxRecord stored) {
    boolean sameId = stored.commandId().equals(command.commandId());
    boolean sameKey = stored.idempotencyKey().equals(command.idempotencyKey());
    if ((sameId && !sameKey) || !command.sameIntentAs(stored)) {
      throw new IdempotencyConflictException(
          command.commandId(), command.idempotencyKey(), stored.commandId());
    }
    return stored;
  }

  private Optional<OutboxRecord> findExisting(Connection c, PreparedCommand command)
      throws SQLException {
    Optional<OutboxRecord> byId;
    try (PreparedStatement ps = c.prepareStatement(BY_ID)) {
      dialect.setId(ps, 1, command.commandId().value());
      byId = one(ps);
    }
    if (byId.isPresent()) {
      return byId;
    }
    try (PreparedStatement ps = c.prepareStatement(BY_KEY)) {
      ps.setString(1, command.idempotencyKey().value());
      return one(ps);
    }
  }

  private Optional<OutboxRecord> one(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() ? Optional.of(rows.read(rs)) : Optional.empty();
    }
  }

  /**
   * Inserts all as new rows: with one JDBC batch where the engine hands back every row's accept
   * sequence as a generated key, else row by row with {@code RETURNING seq}.
   */
  private List<OutboxRecord> insertNew(Connection c, List<PreparedCommand> commands)
      throws SQLException {
    List<OutboxRecord> written = new ArrayList<>(commands.size());
    if (dialect.batchReturnsGeneratedKeys()) {
      try (PreparedStatement ps = c.prepareStatement(INSERT, new String[] {"SEQ"})) {
        for (PreparedCommand command : commands) {
          bind(ps, command);
          ps.addBatch();
        }
        ps.executeBatch();
        try (ResultSet keys = ps.getGeneratedKeys()) {
          for (PreparedCommand command : commands) {
            if (!keys.next()) {
              throw new SQLException("the database returned fewer keys than rows inserted");
            }
            written.add(inserted(command, keys.getLong(1)));
          }
        }
      }
      return written;
    }
    try (PreparedStatement ps = c.prepareStatement(INSERT + " RETURNING seq")) {
      for (PreparedCommand command : commands) {
        bind(ps, command);
        try (ResultSet seq = ps.executeQuery()) {
          if (!seq.next()) {
            throw new SQLException("the database returned no accept sequence for an insert");
          }
          written.add(inserted(command, seq.getLong(1)));
        }
      }
    }
    return written;
  }

  private void bind(PreparedStatement ps, PreparedCommand command) throws SQLException {
    long at = command.acceptedAt().toEpochMilli();
    dialect.setId(ps, 1, command.commandId().value());
    ps.setString(2, command.idempotencyKey().value());
    ps.setString(3, command.operation());
    ps.setString(4, command.entityKey());
    ps.setBytes(5, command.payload().bytes());
    ps.setBytes(6, command.payload().sha256());
    ps.setLong(7, at);
    ps.setLong(8, command.sessionVersion());
    ps.setLong(9, at);
    ps.setLong(10, at);
  }

  private static OutboxRecord inserted(PreparedCommand command, long seq) {
    return new OutboxRecord(command.commandId(), command.idempotencyKey(), command.operation(),
        command.entityKey(), command.payload(), Status.QUEUED, 0, command.acceptedAt(), null,
        null, 0, null, command.sessionVersion(), null, null, command.acceptedAt(),
        command.acceptedAt(), OutboxTables.ROW_FORMAT, seq, null);
  }
}
