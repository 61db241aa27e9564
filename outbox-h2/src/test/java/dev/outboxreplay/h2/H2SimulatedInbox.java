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
final class H2SimulatedInbox extends H2SimulatedFile
    implements InboxSimulation.Database<Connection> {
  private H2InboxStore store;

  H2SimulatedInbox(Path file) {
    super(file, "CREATE TABLE IF NOT EXISTS sim_consumed (seq IDENTITY, "
        + "message_id VARCHAR(200) NOT NULL, bytes VARBINARY NOT NULL)",
        List.of("inbox_message", "sim_consumed"));
  }

  @Override
  void opened(H2Database db) {
    store = H2InboxStore.create(db);
  }

  @Override
  public InboxStore<Connection> open() {
    fresh();
    return store;
  }

  @Override
  public InboxStore<Connection> reopen(InboxStore<Connection> crashed) {
    reopenFile();
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
    try (Connection c = database().dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT message_id, bytes FROM sim_consumed ORDER BY seq")) {
      while (rs.next()) {
        consumed.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getBytes(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return consumed;
  }
}
