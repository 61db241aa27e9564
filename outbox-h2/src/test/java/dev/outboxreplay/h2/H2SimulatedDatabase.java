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
import java.util.Map;
import java.util.UUID;

/**
 * The file simulated schedules run on: one real H2 file database, emptied for each schedule and
 * closed and opened again after a simulated crash, with a table where each applied answer is
 * recorded in the answer's own transaction. One schedule at a time.
 */
final class H2SimulatedDatabase implements OutboxSimulation.Database<Connection>, AutoCloseable {
  private final Path file;
  private H2Database db;
  private H2OutboxStore store;

  H2SimulatedDatabase(Path file) {
    this.file = file;
  }

  @Override
  public OutboxStore<Connection> open() {
    if (db == null) {
      openFile();
    }
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("DELETE FROM outbox_audit");
      s.execute("DELETE FROM outbox_command");
      s.execute("DELETE FROM sim_applied");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return store;
  }

  private void openFile() {
    db = H2Database.builder().file(file).multiProcess(false).build();
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS sim_applied (command_id UUID NOT NULL)");
    } catch (SQLException e) {
      db.close();
      throw new IllegalStateException(e);
    }
    store = H2OutboxStore.create(db);
  }

  @Override
  public OutboxStore<Connection> reopen(OutboxStore<Connection> crashed) {
    close();
    openFile();
    return store;
  }

  @Override
  public void close(OutboxStore<Connection> finished) {
    // kept open for the next schedule, which empties it
  }

  @Override
  public void close() {
    if (db != null) {
      db.close();
      db = null;
    }
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
    try (Connection c = db.dataSource().getConnection();
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
