package dev.outboxreplay.testkit.jdbc;

import dev.outboxreplay.jdbc.JdbcDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.Supplier;

/**
 * One real database file, of any engine, that simulated schedules run on, one at a time: emptied
 * for each schedule, and closed and opened again after a simulated crash, as a dead process leaves
 * it (only its commits stay).
 *
 * @param <D> the engine's database type
 */
public abstract class SimulatedFile<D extends JdbcDatabase>
    implements AutoCloseable {
  private final Supplier<D> opener;
  private final String createTable;
  private final List<String> tables;
  private D db;

  /**
   * @param opener opens the file
   * @param createTable the statement that creates the simulation's own table, if missing
   * @param tables the tables to empty before each schedule
   */
  protected SimulatedFile(Supplier<D> opener, String createTable, List<String> tables) {
    this.opener = opener;
    this.createTable = createTable;
    this.tables = List.copyOf(tables);
  }

  /** Called after every open, to make the store over {@code db}. */
  protected abstract void opened(D db);

  /** The open database, emptied for a new schedule. */
  protected final D fresh() {
    if (db == null) {
      openFile();
    }
    execute(tables.stream().map(t -> "DELETE FROM " + t).toList());
    return db;
  }

  /** Closes the file as a dead process leaves it and opens it again. */
  protected final void reopenFile() {
    close();
    openFile();
  }

  /** The open database. */
  protected final D database() {
    return db;
  }

  private void openFile() {
    db = opener.get();
    execute(List.of(createTable));
    opened(db);
  }

  private void execute(List<String> statements) {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public final void close() {
    if (db != null) {
      db.close();
      db = null;
    }
  }
}
