package dev.outboxreplay.h2;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.testkit.sim.OutboxSimulation;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The file simulated schedules run on: one real H2 file database, emptied for each schedule and
 * closed and opened again after a simulated crash, with a table where each applied answer is
 * recorded in the answer's own transaction. One schedule at a time.
 */
final class H2SimulatedDatabase extends H2SimulatedFile
    implements OutboxSimulation.Database<Connection> {
  private H2OutboxStore store;

  H2SimulatedDatabase(Path file) {
    super(file, "CREATE TABLE IF NOT EXISTS sim_applied (command_id UUID NOT NULL)",
        List.of("outbox_audit", "outbox_command", "sim_applied"));
  }

  @Override
  void opened(H2Database db) {
    store = H2OutboxStore.create(db);
  }

  @Override
  public OutboxStore<Connection> open() {
    fresh();
    return store;
  }

  @Override
  public OutboxStore<Connection> reopen(OutboxStore<Connection> crashed) {
    reopenFile();
    return store;
  }

  @Override
  public void close(OutboxStore<Connection> finished) {
    // kept open for the next schedule, which empties it
  }

  @Override
  public ResponseApplier<Connection> applier() {
    return (tx, command, response) -> {
      try (PreparedStatement ps = tx.prepareStatement("INSERT INTO sim_applied VALUES (?)")) {
        ps.setObject(1, command.commandId().value());
        ps.executeUpdate();
      }
    };
  }

  @Override
  public Map<CommandId, Integer> appliedCounts(OutboxStore<Connection> current) {
    Map<CommandId, Integer> counts = new HashMap<>();
    try (Connection c = database().dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT command_id, COUNT(*) FROM sim_applied GROUP BY command_id")) {
      while (rs.next()) {
        counts.put(CommandId.parse(rs.getObject(1, UUID.class).toString()), rs.getInt(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return counts;
  }
}
