package dev.outboxreplay.testkit.jdbc;

import dev.outboxreplay.testkit.IdempotencyRecordStoreContract;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link IdempotencyRecordStoreContract} for records over JDBC: the request's effect is a row of
 * table {@code contract_effect} in the records' database, written in the transaction that stores
 * the answer. A module subclasses it with how to open its nodes and where their database is.
 */
public abstract class JdbcIdempotencyRecordStoreContract
    extends IdempotencyRecordStoreContract<Connection> {
  /** The database the nodes opened by {@link #openStore} share. */
  protected abstract DataSource sharedDatabase();

  @BeforeEach
  void createEffectTable() throws SQLException {
    try (Connection c = sharedDatabase().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS contract_effect (what VARCHAR(100) NOT NULL)");
    }
  }

  @Override
  protected final void writeEffect(Connection transaction, String what) throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(
        "INSERT INTO contract_effect (what) VALUES (?)")) {
      ps.setString(1, what);
      ps.executeUpdate();
    }
  }

  @Override
  protected final long effects(String what) {
    try (Connection c = sharedDatabase().getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*) FROM contract_effect WHERE what = ?")) {
      ps.setString(1, what);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
