package dev.outboxreplay.h2;

import dev.outboxreplay.InboxConsumer;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.InboxProjector;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Test fixtures for the inbox. The consumer stands in for a decryption ratchet: it advances a
 * per-scope counter and appends to {@code consume_log} (no unique key, so a double consume shows
 * as two rows) in the inbox's own transaction, and refuses bytes that do not start with
 * {@code ok:}. The projector writes the staged text into a separate database, idempotently.
 */
final class RatchetStandIn {
  final AtomicInteger consumerCalls = new AtomicInteger();
  final AtomicInteger projectorCalls = new AtomicInteger();
  volatile boolean projectorFails;

  static void createTables(DataSource inboxDb, DataSource projectionDb) throws SQLException {
    try (Connection c = inboxDb.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS ratchet (scope VARCHAR PRIMARY KEY, steps BIGINT)");
      s.execute("CREATE TABLE IF NOT EXISTS consume_log (scope VARCHAR, message_id VARCHAR)");
    }
    try (Connection c = projectionDb.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS message (scope VARCHAR, message_id VARCHAR, "
          + "body VARCHAR, PRIMARY KEY (scope, message_id))");
    }
  }

  /** Tables on both files, and an inbox over them (recovery at open included). */
  dev.outboxreplay.Inbox<Connection> openInbox(H2Database crypto, H2Database history)
      throws SQLException {
    return openInbox(crypto, history, dev.outboxreplay.FailureInjector.NONE);
  }

  dev.outboxreplay.Inbox<Connection> openInbox(H2Database crypto, H2Database history,
      dev.outboxreplay.FailureInjector failures) throws SQLException {
    createTables(crypto.dataSource(), history.dataSource());
    return dev.outboxreplay.Inbox.builder(H2InboxStore.create(crypto), consumer(),
        projector(history.dataSource())).failureInjector(failures).build();
  }

  InboxConsumer<Connection> consumer() {
    return (Connection c, InboxMessage m) -> {
      consumerCalls.incrementAndGet();
      String text = new String(m.bytes(), StandardCharsets.UTF_8);
      if (!text.startsWith("ok:")) {
        throw new IllegalArgumentException("ciphertext does not authenticate");
      }
      try (PreparedStatement ps = c.prepareStatement(
          "MERGE INTO ratchet r USING (VALUES (CAST(? AS VARCHAR))) v(scope) ON r.scope = v.scope "
              + "WHEN MATCHED THEN UPDATE SET steps = steps + 1 "
              + "WHEN NOT MATCHED THEN INSERT VALUES (v.scope, 1)")) {
        ps.setString(1, m.scope());
        ps.executeUpdate();
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO consume_log VALUES (?, ?)")) {
        ps.setString(1, m.scope());
        ps.setString(2, m.messageId());
        ps.executeUpdate();
      }
      return ("plain:" + text.substring(3)).getBytes(StandardCharsets.UTF_8);
    };
  }

  InboxProjector projector(DataSource projectionDb) {
    return (scope, messageId, staged) -> {
      projectorCalls.incrementAndGet();
      if (projectorFails) {
        throw new IllegalStateException("message store unavailable");
      }
      try (Connection c = projectionDb.getConnection(); PreparedStatement ps = c.prepareStatement(
          "MERGE INTO message KEY (scope, message_id) VALUES (?, ?, ?)")) {
        ps.setString(1, scope);
        ps.setString(2, messageId);
        ps.setString(3, new String(staged, StandardCharsets.UTF_8));
        ps.executeUpdate();
      }
    };
  }

  static long count(DataSource db, String sql) throws SQLException {
    try (Connection c = db.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
