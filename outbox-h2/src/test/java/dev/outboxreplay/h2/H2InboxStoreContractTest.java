package dev.outboxreplay.h2;

import dev.outboxreplay.InboxStore;
import dev.outboxreplay.testkit.InboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** Runs the inbox store contract against an H2 file database. */
class H2InboxStoreContractTest extends InboxStoreContract<Connection> {
  private H2Database database;

  @Override
  protected InboxStore<Connection> openStore(Path directory) {
    database = H2Database.open(directory.resolve("inbox"));
    try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS effect (what VARCHAR(64) NOT NULL)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return H2InboxStore.create(database);
  }

  @Override
  protected void closeStore(InboxStore<Connection> store) {
    store.close();
    database.close();
  }

  @Override
  protected void writeEffect(Connection transaction, String what) throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(
        "INSERT INTO effect (what) VALUES (?)")) {
      ps.setString(1, what);
      ps.executeUpdate();
    }
  }

  @Override
  protected long effects(String what) {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM effect WHERE what = ?")) {
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
