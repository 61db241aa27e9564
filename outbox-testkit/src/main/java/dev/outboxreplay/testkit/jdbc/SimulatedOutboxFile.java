package dev.outboxreplay.testkit.jdbc;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.testkit.sim.OutboxSimulation;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The file simulated outbox schedules run on ({@link OutboxSimulation.Database}): one real
 * database of any engine, with a table {@code sim_applied(n, command_id)} where each applied
 * answer is recorded in the answer's own transaction, in order of {@code n}.
 *
 * @param <D> the engine's database type
 */
public final class SimulatedOutboxFile<D extends JdbcDatabase>
    extends SimulatedFile<D> implements OutboxSimulation.Database<Connection> {
  private final Function<D, OutboxStore<Connection>> storeOf;
  private OutboxStore<Connection> store;

  /**
   * @param opener opens the file
   * @param createApplied the engine's statement creating {@code sim_applied (n, command_id)} with
   *     {@code n} numbered by the database in insert order and {@code command_id} text
   * @param storeOf makes the outbox store over the open database
   */
  public SimulatedOutboxFile(Supplier<D> opener, String createApplied,
      Function<D, OutboxStore<Connection>> storeOf) {
    super(opener, createApplied, List.of("outbox_audit", "outbox_command", "sim_applied"));
    this.storeOf = storeOf;
  }

  @Override
  protected void opened(D db) {
    store = storeOf.apply(db);
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
      try (PreparedStatement ps =
          tx.prepareStatement("INSERT INTO sim_applied (command_id) VALUES (?)")) {
        ps.setString(1, command.commandId().toString());
        ps.executeUpdate();
      }
    };
  }

  @Override
  public List<CommandId> appliedInOrder(OutboxStore<Connection> current) {
    List<CommandId> applied = new ArrayList<>();
    try (Connection c = database().dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT command_id FROM sim_applied ORDER BY n")) {
      while (rs.next()) {
        applied.add(new CommandId(UUID.fromString(rs.getString(1))));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return applied;
  }
}
