package dev.outboxreplay.server;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.testkit.IdempotencyRecordStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** The receiver's records on an H2 file, two nodes opening it through one {@link H2Database}. */
class H2IdempotencyRecordsContractTest extends IdempotencyRecordStoreContract<Connection> {
  private H2Database db;

  @Override
  protected IdempotencyRecordStore<Connection> openStore(Path directory, String node) {
    if (db == null) {
      db = H2Database.open(directory.resolve("server"));
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS contract_effect (what VARCHAR(100) NOT NULL)");
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
    return JdbcIdempotencyRecords.onH2(db, node, LEASE);
  }

  @Override
  protected void closeAll() {
    if (db != null) {
      db.close();
      db = null;
    }
  }

  @Override
  protected void writeEffect(Connection transaction, String what) throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(
        "INSERT INTO contract_effect (what) VALUES (?)")) {
      ps.setString(1, what);
      ps.executeUpdate();
    }
  }

  @Override
  protected long effects(String what) {
    try (Connection c = db.dataSource().getConnection();
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
