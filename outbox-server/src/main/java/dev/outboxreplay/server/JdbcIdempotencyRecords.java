package dev.outboxreplay.server;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.Migration;
import dev.outboxreplay.receiver.Claim;
import dev.outboxreplay.receiver.IdempotencyRecord;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.receiver.KeyTakenOverException;
import dev.outboxreplay.receiver.RecordState;
import dev.outboxreplay.receiver.StoredAnswer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import javax.sql.DataSource;

/**
 * The receiver's idempotency records over JDBC, in table {@code server_idempotency} of an H2 file
 * ({@link #onH2}) or a PostgreSQL database ({@link #onPostgres}) that several receiver nodes
 * share. Each started record carries the node that claimed it, a lease and a fencing token: a
 * claim of a key whose record another node started waits out that node's lease, and the answer
 * is stored with the effect only if the claim's token is still the record's. The SQL is the
 * same on both engines but for the schema's types, its migration and, on PostgreSQL, a first
 * claim's commit that does not wait for its WAL flush (the effect's commit flushes it).
 * Thread-safe.
 */
public final class JdbcIdempotencyRecords implements IdempotencyRecordStore<Connection> {
  /** Component name of the table in an H2 file's schema history. */
  public static final String COMPONENT = "server";
  /** The lease a claim lasts unless the builder says otherwise. */
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
  /** Node name of a receiver that does not name itself: one process that owns its file. */
  public static final String DEFAULT_NODE = "local";

  static final List<Migration> H2_MIGRATIONS = List.of(
      new Migration(1, "server_idempotency table and expiry index", List.of(
          "CREATE TABLE IF NOT EXISTS server_idempotency ("
              + "tenant VARCHAR(100) NOT NULL, idempotency_key VARCHAR(255) NOT NULL, "
              + "operation VARCHAR(200) NOT NULL, payload_hash BINARY(32) NOT NULL, "
              + "status VARCHAR(20) NOT NULL, response_status INT, "
              + "response_content_type VARCHAR(200), response_body VARBINARY, "
              + "error VARCHAR(1000), created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, "
              + "expires_at BIGINT NOT NULL, PRIMARY KEY (tenant, idempotency_key))",
          "CREATE INDEX IF NOT EXISTS idx_server_idempotency_expires "
              + "ON server_idempotency (expires_at)")),
      new Migration(2, "claims carry their node, a lease and a fencing token", List.of(
          "ALTER TABLE server_idempotency ADD COLUMN IF NOT EXISTS owner VARCHAR(200)",
          "ALTER TABLE server_idempotency ADD COLUMN IF NOT EXISTS fence BIGINT DEFAULT 0 "
              + "NOT NULL",
          "ALTER TABLE server_idempotency ADD COLUMN IF NOT EXISTS lease_expires_at BIGINT "
              + "DEFAULT 0 NOT NULL")));

  static final List<Migration> POSTGRES_MIGRATIONS = List.of(
      new Migration(1, "server_idempotency table, expiry index, claims with leases", List.of(
          "CREATE TABLE IF NOT EXISTS server_idempotency ("
              + "tenant VARCHAR(100) NOT NULL, idempotency_key VARCHAR(255) NOT NULL, "
              + "operation VARCHAR(200) NOT NULL, payload_hash BYTEA NOT NULL, "
              + "status VARCHAR(20) NOT NULL, response_status INT, "
              + "response_content_type VARCHAR(200), response_body BYTEA, "
              + "error VARCHAR(1000), created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, "
              + "expires_at BIGINT NOT NULL, owner VARCHAR(200), "
              + "fence BIGINT DEFAULT 0 NOT NULL, lease_expires_at BIGINT DEFAULT 0 NOT NULL, "
              + "PRIMARY KEY (tenant, idempotency_key))",
          "CREATE INDEX IF NOT EXISTS idx_server_idempotency_expires "
              + "ON server_idempotency (expires_at)")));

  /** SQL state of a unique-key violation, the same on H2 and PostgreSQL. */
  private static final String UNIQUE_VIOLATION = "23505";

  private static final String COLUMNS = "status, payload_hash, response_status, "
      + "response_content_type, response_body, error, fence, lease_expires_at";

  private final DataSource dataSource;
  private final Engine engine;
  private final String node;
  private final Duration lease;

  /**
   * What differs between the engines: the check after each commit (H2's of the commit's
   * outcome), how a failed statement becomes a retryable or fatal storage exception, and the
   * statement that inserts a claim's started record (nine parameters: tenant, key, operation,
   * payload hash, created, updated, expires, owner, lease end).
   */
  private record Engine(AfterCommit afterCommit,
      BiFunction<String, SQLException, OutboxStorageException> onStatement,
      String insertClaim) {}

  private static final String INSERT_CLAIM = "INSERT INTO server_idempotency (tenant, "
      + "idempotency_key, operation, payload_hash, status, created_at, updated_at, expires_at, "
      + "owner, fence, lease_expires_at) ";

  /** H2's claim: the values as they are. */
  private static final String H2_INSERT_CLAIM =
      INSERT_CLAIM + "VALUES (?, ?, ?, ?, 'started', ?, ?, ?, ?, 1, ?)";

  /**
   * PostgreSQL's claim: the same values, selected from a one-row subquery that turns
   * {@code synchronous_commit} off for the claim's own transaction only, so that the claim's
   * commit returns without waiting for its WAL to reach the disk. Nothing is lost by it: the
   * effect's transaction, which commits after the claim, waits for its own flush and so for the
   * claim's, since PostgreSQL's WAL is written and replayed in order; a claim that PostgreSQL
   * loses in a crash therefore never has an effect committed, and the request's retry claims the
   * key again. With the server's default ({@code synchronous_commit=on}) a first request waits
   * for one flush instead of two.
   */
  private static final String POSTGRES_INSERT_CLAIM =
      INSERT_CLAIM + "SELECT ?, ?, ?, ?, 'started', ?, ?, ?, ?, 1, ? "
          + "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS claim_commit";

  @FunctionalInterface
  private interface AfterCommit {
    void check(Connection committed) throws SQLException;
  }

  @FunctionalInterface
  private interface Binder {
    void bind(PreparedStatement statement) throws SQLException;
  }

  private JdbcIdempotencyRecords(DataSource dataSource, Engine engine, String node,
      Duration lease) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource == null");
    this.engine = engine;
    this.node = requireNode(node);
    this.lease = requireLease(lease);
  }

  /**
   * The records in {@code database}, an H2 file; creates or upgrades the table. Each receiver
   * process on the file needs its own {@code node} name.
   */
  public static JdbcIdempotencyRecords onH2(H2Database database, String node, Duration lease) {
    database.migrate(COMPONENT, H2_MIGRATIONS);
    return new JdbcIdempotencyRecords(database.dataSource(),
        new Engine(database::afterCommit, database::onStatement, H2_INSERT_CLAIM), node,
        lease);
  }

  /**
   * The records in a PostgreSQL database that every node of the receiver reaches through its own
   * {@code dataSource}; creates or upgrades the table, one node at a time (an advisory lock
   * serialises nodes that start together). {@code node} names this node among them: stable
   * across its restarts, and never the name of another live node.
   */
  public static JdbcIdempotencyRecords onPostgres(DataSource dataSource, String node,
      Duration lease) {
    PostgresMigrations.migrate(dataSource, COMPONENT, POSTGRES_MIGRATIONS);
    return new JdbcIdempotencyRecords(dataSource,
        new Engine(c -> { }, JdbcIdempotencyRecords::onPostgresStatement,
            POSTGRES_INSERT_CLAIM), node, lease);
  }

  private static String requireNode(String node) {
    Objects.requireNonNull(node, "node == null");
    if (node.isBlank() || node.length() > 200) {
      throw new IllegalArgumentException("a node name is 1 to 200 characters: '" + node + "'");
    }
    return node;
  }

  private static Duration requireLease(Duration lease) {
    Objects.requireNonNull(lease, "lease == null");
    if (lease.isNegative() || lease.isZero()) {
      throw new IllegalArgumentException("lease must be positive: " + lease);
    }
    return lease;
  }

  /** This node's name. */
  public String node() {
    return node;
  }

  @Override
  public Claim claim(String tenant, String key, String operation, byte[] payloadHash,
      Instant now, Instant expiresAt) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      for (int round = 0; ; round++) {
        Optional<Seen> seen = find(c, tenant, key);
        if (seen.isEmpty()) {
          if (insertStarted(c, tenant, key, operation, payloadHash, now, expiresAt)) {
            engine.afterCommit().check(c);
            return new Claim.Owned(tenant, key, 1);
          }
          continue; // a concurrent first claim inserted it: read what it made
        }
        Seen s = seen.get();
        boolean takeable = s.record.samePayload(payloadHash)
            && (s.record.state() == RecordState.FAILED || s.record.abandonedAt(now));
        if (!takeable) {
          return new Claim.Standing(s.record);
        }
        if (takeOver(c, tenant, key, s, now)) {
          engine.afterCommit().check(c);
          return new Claim.Owned(tenant, key, s.fence + 1);
        }
        if (round > 100) {
          throw new OutboxStorageException("idempotency key " + tenant + "/" + key
              + " changed under 100 claims in a row", null, true);
        }
        // another node took it over, or finished it, between the read and the update: read again
      }
    } catch (SQLException e) {
      throw engine.onStatement().apply("claim", e);
    }
  }

  private boolean insertStarted(Connection c, String tenant, String key, String operation,
      byte[] hash, Instant now, Instant expiresAt) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(engine.insertClaim())) {
      ps.setString(1, tenant);
      ps.setString(2, key);
      ps.setString(3, operation);
      ps.setBytes(4, hash);
      ps.setLong(5, now.toEpochMilli());
      ps.setLong(6, now.toEpochMilli());
      ps.setLong(7, expiresAt.toEpochMilli());
      ps.setString(8, node);
      ps.setLong(9, now.plus(lease).toEpochMilli());
      ps.executeUpdate();
      return true;
    } catch (SQLException e) {
      if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
        return false;
      }
      throw e;
    }
  }

  /** A failed record, or a started one whose lease ended, becomes this node's, fenced. */
  private boolean takeOver(Connection c, String tenant, String key, Seen seen, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE server_idempotency SET "
        + "status = 'started', error = NULL, owner = ?, fence = fence + 1, "
        + "lease_expires_at = ?, updated_at = ? WHERE tenant = ? AND idempotency_key = ? "
        + "AND fence = ? AND (status = 'failed' OR status = 'started' AND lease_expires_at <= ?)")) {
      ps.setString(1, node);
      ps.setLong(2, now.plus(lease).toEpochMilli());
      ps.setLong(3, now.toEpochMilli());
      ps.setString(4, tenant);
      ps.setString(5, key);
      ps.setLong(6, seen.fence);
      ps.setLong(7, now.toEpochMilli());
      return ps.executeUpdate() == 1;
    }
  }

  @Override
  public StoredAnswer complete(Claim.Owned claim, Work<Connection> work, Instant now)
      throws Exception {
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      StoredAnswer answer;
      try {
        answer = Objects.requireNonNull(work.run(tx), "the work returned no answer");
        try (PreparedStatement ps = tx.prepareStatement("UPDATE server_idempotency SET "
            + "status = 'committed', response_status = ?, response_content_type = ?, "
            + "response_body = ?, updated_at = ? WHERE tenant = ? AND idempotency_key = ? "
            + "AND status = 'started' AND fence = ?")) {
          ps.setInt(1, answer.status());
          ps.setString(2, answer.contentType());
          ps.setBytes(3, answer.body());
          ps.setLong(4, now.toEpochMilli());
          ps.setString(5, claim.tenant());
          ps.setString(6, claim.key());
          ps.setLong(7, claim.fence());
          if (ps.executeUpdate() != 1) {
            throw new KeyTakenOverException(claim);
          }
        }
        tx.commit();
      } catch (Exception e) {
        try {
          tx.rollback();
        } catch (SQLException rollbackFailed) {
          e.addSuppressed(rollbackFailed);
        }
        throw e;
      }
      engine.afterCommit().check(tx);
      return answer;
    }
  }

  @Override
  public void fail(Claim.Owned claim, String error, Instant now) {
    update("fail", "UPDATE server_idempotency SET status = 'failed', error = ?, updated_at = ? "
        + "WHERE tenant = ? AND idempotency_key = ? AND status = 'started' AND fence = ?", ps -> {
          ps.setString(1, error.length() > 1000 ? error.substring(0, 1000) : error);
          ps.setLong(2, now.toEpochMilli());
          ps.setString(3, claim.tenant());
          ps.setString(4, claim.key());
          ps.setLong(5, claim.fence());
        });
  }

  @Override
  public Optional<IdempotencyRecord> find(String tenant, String key) {
    try (Connection c = dataSource.getConnection()) {
      return find(c, tenant, key).map(s -> s.record);
    } catch (SQLException e) {
      throw engine.onStatement().apply("find", e);
    }
  }

  private record Seen(IdempotencyRecord record, long fence) {}

  private static Optional<Seen> find(Connection c, String tenant, String key)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS
        + " FROM server_idempotency WHERE tenant = ? AND idempotency_key = ?")) {
      ps.setString(1, tenant);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        RecordState state = RecordState.of(rs.getString(1));
        StoredAnswer answer = state != RecordState.COMMITTED ? null
            : new StoredAnswer(rs.getInt(3), rs.getString(4),
                rs.getBytes(5) == null ? new byte[0] : rs.getBytes(5));
        Instant lease = state == RecordState.STARTED ? Instant.ofEpochMilli(rs.getLong(8)) : null;
        return Optional.of(new Seen(new IdempotencyRecord(state, rs.getBytes(2), answer,
            rs.getString(6), lease), rs.getLong(7)));
      }
    }
  }

  @Override
  public int releaseOwnStarted(Instant now) {
    return update("release", "UPDATE server_idempotency SET lease_expires_at = ? "
        + "WHERE status = 'started' AND owner = ? AND lease_expires_at > ?", ps -> {
          ps.setLong(1, now.toEpochMilli());
          ps.setString(2, node);
          ps.setLong(3, now.toEpochMilli());
        });
  }

  @Override
  public int pruneExpired(Instant now, int batch) {
    return update("prune", "DELETE FROM server_idempotency "
        + "WHERE (tenant, idempotency_key) IN (SELECT tenant, idempotency_key "
        + "FROM server_idempotency WHERE expires_at < ? "
        + "AND (status <> 'started' OR lease_expires_at <= ?) LIMIT ?)", ps -> {
          ps.setLong(1, now.toEpochMilli());
          ps.setLong(2, now.toEpochMilli());
          ps.setInt(3, batch);
        });
  }

  /** One statement in a transaction of its own; the rows it changed. */
  private int update(String action, String sql, Binder binder) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      c.setAutoCommit(true);
      binder.bind(ps);
      int changed = ps.executeUpdate();
      engine.afterCommit().check(c);
      return changed;
    } catch (SQLException e) {
      throw engine.onStatement().apply(action, e);
    }
  }

  @Override
  public long count() {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM server_idempotency")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw engine.onStatement().apply("count", e);
    }
  }

  /**
   * A failed statement on PostgreSQL: retryable for a connection failure (class 08), a
   * serialization failure or deadlock (class 40) and a lock not obtained (55P03).
   */
  private static OutboxStorageException onPostgresStatement(String action, SQLException e) {
    String state = e.getSQLState();
    boolean passing = state != null && (state.startsWith("08") || state.startsWith("40")
        || state.equals("55P03"));
    return new OutboxStorageException("idempotency records: " + action + " failed: "
        + e.getMessage(), e, passing);
  }
}
