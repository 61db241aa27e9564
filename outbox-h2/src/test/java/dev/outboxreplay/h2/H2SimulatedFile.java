package dev.outboxreplay.h2;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * One real H2 file that simulated schedules run on, one at a time: emptied for each schedule, and
 * closed and opened again after a simulated crash.
 */
abstract class H2SimulatedFile implements AutoCloseable {
  private final Path file;
  private final String createTable;
  private final List<String> tables;
  private H2Database db;

  /**
   * @param createTable the statement that creates the simulation's own table, if missing
   * @param tables the tables to empty before each schedule
   */
  H2SimulatedFile(Path file, String createTable, List<String> tables) {
    this.file = file;
    this.createTable = createTable;
    this.tables = List.copyOf(tables);
  }

  /** Called after every open, to make the store over {@code db}. */
  abstract void opened(H2Database db);

  /** The open database, emptied for a new schedule. */
  final H2Database fresh() {
    if (db == null) {
      openFile();
    }
    execute(tables.stream().map(t -> "DELETE FROM " + t).toList());
    return db;
  }

  /** Closes the file as a dead process leaves it (only its commits stay) and opens it again. */
  final void reopenFile() {
    close();
    openFile();
  }

  final H2Database database() {
    return db;
  }

  private void openFile() {
    db = H2Database.builder().file(file).multiProcess(false).build();
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
