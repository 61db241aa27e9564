package dev.outboxreplay.server.internal;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.Migration;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The server's idempotency table {@code server_idempotency}, primary key (tenant, key):
 * status {@code started} (being processed), {@code committed} (answer stored, replayed to
 * repeats) or {@code failed} (the handler threw; nothing took effect; the key may be retried).
 */
public final class IdempotencyRecords {
  public static final String COMPONENT = "server";
  public static final List<Migration> MIGRATIONS = List.of(new Migration(1,
      "server_idempotency table and expiry index", List.of(
          "CREATE TABLE IF NOT EXISTS server_idempotency ("
              + "tenant VARCHAR(100) NOT NULL, idempotency_key VARCHAR(255) NOT NULL, "
              + "operation VARCHAR(200) NOT NULL, payload_hash BINARY(32) NOT NULL, "
              + "status VARCHAR(20) NOT NULL, response_status INT, "
              + "response_content_type VARCHAR(200), response_body VARBINARY, "
              + "error VARCHAR(1000), created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, "
              + "expires_at BIGINT NOT NULL, PRIMARY KEY (tenant, idempotency_key))",
          "CREATE INDEX IF NOT EXISTS idx_server_idempotency_expires "
              + "ON server_idempotency (expires_at)")));

  /** One stored record. */
  /** Where a key's request is, as stored in {@code server_idempotency.status}. */
  public enum State {
    /** Being processed; a repeat is answered 409 until it ends. */
    STARTED("started"),
    /** Applied; its stored answer is the answer to every repeat. */
    COMMITTED("committed"),
    /** The handler failed and nothing took effect; a repeat with the same payload runs again. */
    FAILED("failed");

    private final String stored;

    State(String stored) {
      this.stored = stored;
    }

    /** The value in the table and in reconciliation answers. */
    public String stored() {
      return stored;
    }

    static State of(String stored) {
      for (State s : values()) {
        if (s.stored.equals(stored)) {
          return s;
        }
      }
      throw new IllegalStateException("unknown idempotency record status '" + stored + "'");
    }
  }

  public record Record(State state, byte[] payloadHash, int responseStatus, String contentType,
      byte[] responseBody, String error) {
    public boolean samePayload(byte[] hash) {
      return MessageDigest.isEqual(payloadHash, hash);
    }
  }

  private final H2Database database;

  public IdempotencyRecords(H2Database database) {
    this.database = database;
  }

  /** Forgets requests that were being processed by a process that is gone. */
  public int clearStarted() throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(
            "DELETE FROM server_idempotency WHERE status = 'started'")) {
      int deleted = ps.executeUpdate();
      database.afterCommit(c);
      return deleted;
    }
  }

  public Optional<Record> find(String tenant, String key) throws SQLException {
    try (Connection c = database.dataSource().getConnection()) {
      return find(c, tenant, key);
    }
  }

  private static Optional<Record> find(Connection c, String tenant, String key)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT status, payload_hash, "
        + "response_status, response_content_type, response_body, error "
        + "FROM server_idempotency WHERE tenant = ? AND idempotency_key = ?")) {
      ps.setString(1, tenant);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Record(State.of(rs.getString(1)), rs.getBytes(2), rs.getInt(3),
            rs.getString(4), rs.getBytes(5), rs.getString(6)));
      }
    }
  }

  /**
   * Claims the key for processing: inserts a {@code started} record, or restarts a
   * {@code failed} one with the same payload, and commits so concurrent requests see it.
   *
   * @return empty when this call owns the key now; otherwise the record that stands in the way
   */
  public Optional<Record> start(String tenant, String key, String operation, byte[] hash,
      Instant now, Instant expiresAt) throws SQLException {
    try (Connection c = database.dataSource().getConnection()) {
      Optional<Record> standing = startIn(c, tenant, key, operation, hash, now, expiresAt);
      if (standing.isEmpty()) {
        database.afterCommit(c); // the key is ours: durable as the mode promises
      }
      return standing;
    }
  }

  private static Optional<Record> startIn(Connection c, String tenant, String key,
      String operation, byte[] hash, Instant now, Instant expiresAt) throws SQLException {
    Optional<Record> seen = find(c, tenant, key);
    if (seen.isPresent()) {
      return restartIfFailed(c, seen.get(), tenant, key, hash, now);
    }
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO server_idempotency (tenant, "
        + "idempotency_key, operation, payload_hash, status, created_at, updated_at, "
        + "expires_at) VALUES (?, ?, ?, ?, 'started', ?, ?, ?)")) {
      ps.setString(1, tenant);
      ps.setString(2, key);
      ps.setString(3, operation);
      ps.setBytes(4, hash);
      ps.setLong(5, now.toEpochMilli());
      ps.setLong(6, now.toEpochMilli());
      ps.setLong(7, expiresAt.toEpochMilli());
      ps.executeUpdate();
      return Optional.empty();
    } catch (SQLException e) {
      if (!H2Database.isUniqueViolation(e)) {
        throw e;
      }
    }
    // A concurrent first request inserted it between our read and our insert.
    Optional<Record> raced = find(c, tenant, key);
    return raced.isPresent() ? restartIfFailed(c, raced.get(), tenant, key, hash, now) : raced;
  }

  /** A failed record with the same payload is taken over for a retry; others stand. */
  private static Optional<Record> restartIfFailed(Connection c, Record existing, String tenant,
      String key, byte[] hash, Instant now) throws SQLException {
    if (existing.state() != State.FAILED || !existing.samePayload(hash)) {
      return Optional.of(existing);
    }
    try (PreparedStatement ps = c.prepareStatement("UPDATE server_idempotency SET "
        + "status = 'started', error = NULL, updated_at = ? "
        + "WHERE tenant = ? AND idempotency_key = ? AND status = 'failed'")) {
      ps.setLong(1, now.toEpochMilli());
      ps.setString(2, tenant);
      ps.setString(3, key);
      if (ps.executeUpdate() == 1) {
        return Optional.empty();
      }
    }
    return find(c, tenant, key);
  }

  /** Stores the answer of a started request, in the caller's business transaction. */
  public void commit(Connection transaction, String tenant, String key, int status,
      String contentType, byte[] body, Instant now) throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement("UPDATE server_idempotency SET "
        + "status = 'committed', response_status = ?, response_content_type = ?, "
        + "response_body = ?, updated_at = ? "
        + "WHERE tenant = ? AND idempotency_key = ? AND status = 'started'")) {
      ps.setInt(1, status);
      ps.setString(2, contentType);
      ps.setBytes(3, body);
      ps.setLong(4, now.toEpochMilli());
      ps.setString(5, tenant);
      ps.setString(6, key);
      if (ps.executeUpdate() != 1) {
        throw new SQLException(
            "idempotency record " + tenant + "/" + key + " is no longer started");
      }
    }
  }

  /** Records that the handler failed; nothing of it took effect. */
  public void fail(String tenant, String key, String error, Instant now) throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE server_idempotency SET "
            + "status = 'failed', error = ?, updated_at = ? "
            + "WHERE tenant = ? AND idempotency_key = ? AND status = 'started'")) {
      ps.setString(1, error.length() > 1000 ? error.substring(0, 1000) : error);
      ps.setLong(2, now.toEpochMilli());
      ps.setString(3, tenant);
      ps.setString(4, key);
      ps.executeUpdate();
      database.afterCommit(c);
    }
  }

  /** Deletes up to {@code batch} finished records that expired before {@code now}. */
  public int pruneExpired(Instant now, int batch) throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("DELETE FROM server_idempotency "
            + "WHERE expires_at < ? AND status <> 'started' LIMIT ?")) {
      ps.setLong(1, now.toEpochMilli());
      ps.setInt(2, batch);
      int deleted = ps.executeUpdate();
      database.afterCommit(c);
      return deleted;
    }
  }

  /** Number of stored records, for tests and operators. */
  public long count() throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM server_idempotency");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
