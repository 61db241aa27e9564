package dev.outboxreplay.h2;

import dev.outboxreplay.InboxConsumer;
import dev.outboxreplay.InboxStore;
import dev.outboxreplay.testkit.sim.InboxSimulation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The file simulated inbox schedules run on: one real H2 file, emptied for each schedule, closed
 * and opened again after a simulated crash. The consumer's irreversible effect is a row in
 * {@code sim_consumed}, written in the consume transaction. One schedule at a time.
 */
final class H2SimulatedInbox implements InboxSimulation.Database<Connection>, AutoCloseable {
  private final Path file;
  private H2Database db;
  private H2InboxStore store;

  H2SimulatedInbox(Path file) {
    this.file = file;
  }

  @Override
  public InboxStore<Connection> open() {
    if (db == null) {
      openFile();
    }
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("DELETE FROM inbox_message");
      s.execute("DELETE FROM sim_consumed");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return store;
  }

  private void openFile() {
    db = H2Database.builder().file(file).multiProcess(false).build();
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS sim_consumed (seq IDENTITY, "
          + "message_id VARCHAR(200) NOT NULL, bytes VARBINARY NOT NULL)");
    } catch (SQLException e) {
      db.close();
      throw new IllegalStateException(e);
    }
    store = H2InboxStore.create(db);
  }

  @Override
  public InboxStore<Connection> reopen(InboxStore<Connection> crashed) {
    close();
    openFile();
    return store;
  }

  @Override
  public InboxConsumer<Connection> consumer() {
    return (tx, message) -> {
      try (PreparedStatement ps = tx.prepareStatement(
          "INSERT INTO sim_consumed (message_id, bytes) VALUES (?, ?)")) {
        ps.setString(1, message.messageId());
        ps.setBytes(2, message.bytes());
        ps.executeUpdate();
      }
      return ("projected:" + new String(message.bytes(), StandardCharsets.UTF_8))
          .getBytes(StandardCharsets.UTF_8);
    };
  }

  @Override
  public Map<String, List<byte[]>> consumed(InboxStore<Connection> current) {
    Map<String, List<byte[]>> consumed = new HashMap<>();
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT message_id, bytes FROM sim_consumed ORDER BY seq")) {
      while (rs.next()) {
        consumed.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getBytes(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return consumed;
  }

  @Override
  public void close() {
    if (db != null) {
      db.close();
      db = null;
    }
  }
}
