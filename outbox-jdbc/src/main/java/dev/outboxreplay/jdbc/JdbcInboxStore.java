package dev.outboxreplay.jdbc;

import dev.outboxreplay.InboxConsumerException;
import dev.outboxreplay.InboxEntry;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.InboxStore;
import dev.outboxreplay.jdbc.internal.OutboxTables;
import dev.outboxreplay.jdbc.internal.Rollback;
import dev.outboxreplay.jdbc.internal.SchemaMigrator;
import dev.outboxreplay.OutboxStorageException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The processed inbox on one open file ({@link JdbcDatabase}): table {@code inbox_message},
 * primary key (scope, message_id). The consume transaction inserts the row first, so a concurrent
 * receiver of the same message blocks on that row (or, with SQLite, the file's write lock) until
 * the first one commits or rolls back, and never runs its consumer while the first one might
 * still commit. Layout: {@code docs/table-layout.md}.
 *
 * <p>Thread-safe.
 */
public class JdbcInboxStore implements InboxStore<Connection> {
  private static final String COLUMNS = "scope, message_id, state, staged_result, message_hash, "
      + "consumed_at, projected_at";

  private final JdbcDatabase database;

  /** A store on {@code database}, whose inbox table must be this release's. */
  protected JdbcInboxStore(JdbcDatabase database) {
    this.database = Objects.requireNonNull(database, "database == null");
  }

  /**
   * Creates the inbox table in {@code database} if needed.
   *
   * @throws OutboxStorageException when the file's inbox schema is newer than this release
   */
  public static JdbcInboxStore create(JdbcDatabase database) {
    return create(database, JdbcInboxStore::new);
  }

  /**
   * Creates or upgrades the inbox table, then makes the store with {@code store}: for engine
   * modules whose store type names the engine.
   */
  protected static <S extends JdbcInboxStore> S create(JdbcDatabase database,
      java.util.function.Function<JdbcDatabase, S> store) {
    Objects.requireNonNull(database, "database == null");
    SchemaMigrator.migrate(database, OutboxTables.INBOX_COMPONENT,
        database.dialect().inboxMigrations(), java.time.Clock.systemUTC());
    return store.apply(database);
  }

  @Override
  public Optional<InboxEntry> find(String scope, String messageId) {
    try {
      return database.retry(() -> {
        try (Connection c = database.dataSource().getConnection();
            PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS
                + " FROM inbox_message WHERE scope = ? AND message_id = ?")) {
          ps.setString(1, scope);
          ps.setString(2, messageId);
          try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.of(read(rs)) : Optional.empty();
          }
        }
      });
    } catch (SQLException e) {
      throw database.onStatement("inbox lookup", e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>A try whose failure passes (a handover, a busy file) is run again, for up to the engine's
   * bound ({@link JdbcDatabase#retry}): its transaction never committed, or, if its commit did
   * land just before, the new try finds the reservation and returns empty without running the
   * consumer (the receive then reports a duplicate).
   */
  @Override
  public Optional<InboxEntry> consumeOnce(InboxMessage message, Instant now,
      ConsumeWork<Connection> work) {
    byte[] messageHash = message.sha256();
    try {
      return database.retry(() -> consumeOnceTry(message, messageHash, now, work));
    } catch (SQLException e) {
      throw database.onStatement("inbox consume", e);
    }
  }

  private Optional<InboxEntry> consumeOnceTry(InboxMessage message, byte[] messageHash,
      Instant now, ConsumeWork<Connection> work) throws SQLException {
    try (Connection c = database.dataSource().getConnection()) {
      c.setAutoCommit(false);
      byte[] staged;
      try {
        database.dialect().beginWrite(c);
        if (!reserve(c, message, messageHash, now)) {
          c.rollback(); // nothing written
          return Optional.empty();
        }
        try {
          staged = work.run(c);
        } catch (Exception e) {
          Rollback.after(e, c, null);
          SQLException handover = database.passingCause(e);
          if (handover != null) {
            throw handover; // the consumer's connection broke: nothing of it committed
          }
          throw new InboxConsumerException(message.scope(), message.messageId(), e);
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE inbox_message SET "
            + "state = 'staged', staged_result = ?, updated_at = ? "
            + "WHERE scope = ? AND message_id = ?")) {
          ps.setBytes(1, staged);
          ps.setLong(2, now.toEpochMilli());
          ps.setString(3, message.scope());
          ps.setString(4, message.messageId());
          ps.executeUpdate();
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        Rollback.after(e, c, null);
        throw e;
      }
      database.afterCommit(c);
      // What this transaction committed; a re-read could already show another process's
      // projection of it.
      return Optional.of(new InboxEntry(message.scope(), message.messageId(),
          InboxEntry.State.STAGED, staged, messageHash, Instant.ofEpochMilli(now.toEpochMilli()),
          null));
    }
  }

  /** Inserts the reservation; false when the message is already there (committed by another). */
  private boolean reserve(Connection c, InboxMessage message, byte[] hash, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO inbox_message (scope, "
        + "message_id, state, message_hash, consumed_at, updated_at) "
        + "VALUES (?, ?, 'consuming', ?, ?, ?)")) {
      ps.setString(1, message.scope());
      ps.setString(2, message.messageId());
      ps.setBytes(3, hash);
      ps.setLong(4, now.toEpochMilli());
      ps.setLong(5, now.toEpochMilli());
      ps.executeUpdate();
      return true;
    } catch (SQLException e) {
      if (database.dialect().isUniqueViolation(e)) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public void markProjected(String scope, String messageId, Instant now) {
    execute("mark projected", "UPDATE inbox_message SET state = 'projected', "
        + "staged_result = NULL, projected_at = ?, updated_at = ? "
        + "WHERE scope = ? AND message_id = ? AND state = 'staged'",
        now.toEpochMilli(), now.toEpochMilli(), scope, messageId);
  }

  @Override
  public boolean markIntegrityFailure(String scope, String messageId, Instant now) {
    return 1 == execute("mark integrity failure",
        "UPDATE inbox_message SET state = 'integrity_failure', "
        + "updated_at = ? WHERE scope = ? AND message_id = ? AND state = 'staged' "
        + "AND staged_result IS NULL", now.toEpochMilli(), scope, messageId);
  }

  @Override
  public void recordMismatch(String scope, String messageId, Instant now) {
    try { // not run again through a handover: a count must not grow twice
      executeOnce("UPDATE inbox_message SET mismatches = mismatches + 1, "
          + "last_mismatch_at = ? WHERE scope = ? AND message_id = ?", now.toEpochMilli(), scope,
          messageId);
    } catch (SQLException e) {
      throw database.onStatement("record mismatch", e);
    }
  }

  @Override
  public List<Mismatch> listMismatches(int limit) {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT scope, message_id, mismatches, "
            + "last_mismatch_at FROM inbox_message WHERE mismatches > 0 "
            + "ORDER BY last_mismatch_at DESC, scope, message_id LIMIT ?")) {
      ps.setInt(1, limit);
      List<Mismatch> result = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          result.add(new Mismatch(rs.getString(1), rs.getString(2), rs.getInt(3),
              Instant.ofEpochMilli(rs.getLong(4))));
        }
      }
      return result;
    } catch (SQLException e) {
      throw database.onStatement("inbox mismatches", e);
    }
  }

  @Override
  public List<InboxEntry> list(InboxEntry.State state, int limit) {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM inbox_message "
            + "WHERE state = ? ORDER BY consumed_at, scope, message_id LIMIT ?")) {
      ps.setString(1, wireName(state));
      ps.setInt(2, limit);
      List<InboxEntry> result = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          result.add(read(rs));
        }
      }
      return result;
    } catch (SQLException e) {
      throw database.onStatement("inbox list", e);
    }
  }

  @Override
  public int pruneTombstones(Instant projectedBefore) {
    return execute("inbox tombstone pruning", "DELETE FROM inbox_message "
        + "WHERE state = 'projected' AND projected_at < ?", projectedBefore.toEpochMilli());
  }

  /** Holds nothing of its own; close the {@link JdbcDatabase}. */
  @Override
  public void close() {}

  /**
   * Runs one idempotent update in its own transaction, honouring the durability mode; run again
   * through a handover.
   */
  private int execute(String action, String sql, Object... parameters) {
    try {
      return database.retry(() -> executeOnce(sql, parameters));
    } catch (SQLException e) {
      throw database.onStatement(action, e);
    }
  }

  private int executeOnce(String sql, Object... parameters) throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        ps.setObject(i + 1, parameters[i]);
      }
      int changed = ps.executeUpdate();
      database.afterCommit(c);
      return changed;
    }
  }

  private InboxEntry read(ResultSet rs) throws SQLException {
    String state = rs.getString(3);
    long projectedAt = rs.getLong(7);
    boolean hasProjectedAt = !rs.wasNull();
    return new InboxEntry(rs.getString(1), rs.getString(2), stateOf(state, rs.getString(2)),
        rs.getBytes(4), rs.getBytes(5), Instant.ofEpochMilli(rs.getLong(6)),
        hasProjectedAt ? Instant.ofEpochMilli(projectedAt) : null);
  }

  private InboxEntry.State stateOf(String wire, String messageId) {
    return switch (wire) {
      case "staged" -> InboxEntry.State.STAGED;
      case "projected" -> InboxEntry.State.PROJECTED;
      case "integrity_failure" -> InboxEntry.State.INTEGRITY_FAILURE;
      default -> throw new OutboxStorageException("inbox database " + database.file()
          + " holds message " + messageId + " in unknown state '" + wire + "'");
    };
  }

  private static String wireName(InboxEntry.State state) {
    return switch (state) {
      case STAGED -> "staged";
      case PROJECTED -> "projected";
      case INTEGRITY_FAILURE -> "integrity_failure";
    };
  }
}
