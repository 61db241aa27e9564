package dev.outboxreplay.testkit.jdbc;

import dev.outboxreplay.InboxStore;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcInboxStore;
import dev.outboxreplay.testkit.InboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * {@link InboxStoreContract} for a {@link JdbcInboxStore}: the consumer's effect is a row of
 * table {@code effect} in the same database, written in the consume transaction. A module
 * subclasses it with how to open its database.
 */
public abstract class JdbcInboxStoreContract extends InboxStoreContract<Connection> {
  private JdbcDatabase database;

  /** Opens (or reopens) the database file {@code file}. */
  protected abstract JdbcDatabase openDatabase(Path file);

  @Override
  protected final InboxStore<Connection> openStore(Path directory) {
    database = openDatabase(directory.resolve("inbox"));
    try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS effect (what VARCHAR(64) NOT NULL)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return JdbcInboxStore.create(database);
  }

  @Override
  protected final void closeStore(InboxStore<Connection> store) {
    store.close();
    database.close();
  }

  @Override
  protected final void writeEffect(Connection transaction, String what) throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(
        "INSERT INTO effect (what) VALUES (?)")) {
      ps.setString(1, what);
      ps.executeUpdate();
    }
  }

  @Override
  protected final long effects(String what) {
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
