package dev.outboxreplay.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.server.HandlerResponse;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.eclipse.jetty.server.Server;

/**
 * The least a guard of one shape can do for a first request on PostgreSQL: only the statements
 * its shape needs before and after the application's handler, and nothing else (no hash, no
 * protocol, no check of what the claim found: every key is new). A guard has to hold the key
 * before its handler runs (one that held nothing would run the handler for every repeat) and
 * store the answer after it, so no guard does less than the cheapest shape, and their rates
 * against the bare handler bound the guard's. {@link PostgresReceiverBenchmark} measures each.
 */
enum LeastGuard {
  /**
   * The guard's own shape: the claim's started record inserted and committed on its own, without
   * waiting for its flush as the guard's claim; then the effect and the answer's update in one
   * transaction.
   */
  CLAIM_COMMITTED("claim committed alone") {
    @Override
    void before(Connection c, String key, long now) throws SQLException {
      c.setAutoCommit(true);
      insert(c, CLAIM + "SELECT ?, ?, ?, ?, 'started', ?, ?, ?, ?, 1, ? "
          + "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS claim_commit", key,
          now);
    }
  },
  /**
   * The claim's insert, the effect and the answer's update in one transaction: a concurrent
   * repeat waits on the uncommitted claim instead of seeing it.
   */
  ONE_TRANSACTION("one transaction") {
    @Override
    void before(Connection c, String key, long now) throws SQLException {
      c.setAutoCommit(false);
      insert(c, CLAIM + "VALUES (?, ?, ?, ?, 'started', ?, ?, ?, ?, 1, ?)", key, now);
    }
  },
  /**
   * No claim row: a transaction-scoped advisory lock on the key and a look for its record in one
   * statement, then the effect, then the record inserted with its answer.
   */
  LOCK_THEN_RECORD("lock, then record") {
    @Override
    void before(Connection c, String key, long now) throws SQLException {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock("
          + "hashtextextended(?, 0)), EXISTS (SELECT 1 FROM server_idempotency "
          + "WHERE tenant = ? AND idempotency_key = ?)")) {
        ps.setString(1, key);
        ps.setString(2, TENANT);
        ps.setString(3, key);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next() || rs.getBoolean(2)) {
            throw new IllegalStateException("a record already exists for " + key);
          }
        }
      }
    }

    @Override
    void after(Connection c, String key, long now, HandlerResponse answer) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(COLUMNS + ", response_status, "
          + "response_content_type, response_body) "
          + "VALUES (?, ?, ?, ?, 'committed', ?, ?, ?, ?, 1, ?, ?, ?, ?)")) {
        bindRecord(ps, key, now);
        ps.setInt(10, answer.status());
        ps.setString(11, answer.contentType());
        ps.setBytes(12, answer.body());
        ps.executeUpdate();
      }
    }
  };

  private static final String TENANT = "default";
  private static final String COLUMNS = "INSERT INTO server_idempotency (tenant, "
      + "idempotency_key, operation, payload_hash, status, created_at, updated_at, expires_at, "
      + "owner, fence, lease_expires_at";
  /** A claim's started record, as the guard's claim writes it, before its nine values. */
  private static final String CLAIM = COLUMNS + ") ";
  private static final byte[] HASH = new byte[32];

  final String title;

  LeastGuard(String title) {
    this.title = title;
  }

  /** What the shape runs before the handler; leaves {@code c} in the effect's transaction. */
  abstract void before(Connection c, String key, long now) throws SQLException;

  /**
   * What the shape runs after the handler, in the effect's transaction; the caller commits. Both
   * claim shapes update their started record to the answer.
   */
  void after(Connection c, String key, long now, HandlerResponse answer) throws SQLException {
    updateAnswer(c, key, now, answer);
  }

  /** A started Jetty server on loopback, the bare handler's, that answers as this shape does. */
  Server start(HikariDataSource pool, NotesApplication notes) throws Exception {
    OperationHandler handler = notes.handler();
    return ServerBenchmark.bareServer((request, body) -> {
      String key = request.getHeaders().get("Idempotency-Key");
      long now = System.currentTimeMillis();
      try (Connection c = pool.getConnection()) {
        before(c, key, now);
        c.setAutoCommit(false);
        try {
          HandlerResponse answer = handler.handle(c, new ServerRequest(TENANT,
              NotesApplication.OPERATION, key, null, null, body));
          after(c, key, now, answer);
          c.commit();
          return answer.body();
        } catch (Exception e) {
          c.rollback();
          throw e;
        }
      }
    });
  }

  private static void insert(Connection c, String sql, String key, long now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bindRecord(ps, key, now);
      ps.executeUpdate();
    }
  }

  private static void updateAnswer(Connection c, String key, long now, HandlerResponse answer)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE server_idempotency SET "
        + "status = 'committed', response_status = ?, response_content_type = ?, "
        + "response_body = ?, updated_at = ? WHERE tenant = ? AND idempotency_key = ? "
        + "AND status = 'started' AND fence = 1")) {
      ps.setInt(1, answer.status());
      ps.setString(2, answer.contentType());
      ps.setBytes(3, answer.body());
      ps.setLong(4, now);
      ps.setString(5, TENANT);
      ps.setString(6, key);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("no started record for " + key);
      }
    }
  }

  /** The first nine values of a record (tenant to lease end). */
  private static void bindRecord(PreparedStatement ps, String key, long now)
      throws SQLException {
    ps.setString(1, TENANT);
    ps.setString(2, key);
    ps.setString(3, NotesApplication.OPERATION);
    ps.setBytes(4, HASH);
    ps.setLong(5, now);
    ps.setLong(6, now);
    ps.setLong(7, now + 86_400_000L);
    ps.setString(8, "least");
    ps.setLong(9, now + 30_000L);
  }
}
