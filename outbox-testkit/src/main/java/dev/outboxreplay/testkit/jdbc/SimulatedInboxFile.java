package dev.outboxreplay.testkit.jdbc;

import dev.outboxreplay.InboxConsumer;
import dev.outboxreplay.InboxStore;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.testkit.sim.InboxSimulation;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The file simulated inbox schedules run on ({@link InboxSimulation.Database}): one real database
 * of any engine. The consumer's irreversible effect is a row in {@code sim_consumed(seq,
 * message_id, bytes)}, written in the consume transaction.
 *
 * @param <D> the engine's database type
 */
public final class SimulatedInboxFile<D extends JdbcDatabase>
    extends SimulatedFile<D> implements InboxSimulation.Database<Connection> {
  private final Function<D, InboxStore<Connection>> storeOf;
  private InboxStore<Connection> store;

  /**
   * @param opener opens the file
   * @param createConsumed the engine's statement creating {@code sim_consumed (seq, message_id,
   *     bytes)} with {@code seq} numbered by the database in insert order
   * @param storeOf makes the inbox store over the open database
   */
  public SimulatedInboxFile(Supplier<D> opener, String createConsumed,
      Function<D, InboxStore<Connection>> storeOf) {
    super(opener, createConsumed, List.of("inbox_message", "sim_consumed"));
    this.storeOf = storeOf;
  }

  @Override
  protected void opened(D db) {
    store = storeOf.apply(db);
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
