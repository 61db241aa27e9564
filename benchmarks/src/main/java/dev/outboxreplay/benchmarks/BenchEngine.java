package dev.outboxreplay.benchmarks;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.sqlite.SqliteDatabase;
import java.nio.file.Path;

/** The embedded engine a benchmark's outbox file is on, each with its library defaults. */
enum BenchEngine {
  H2, SQLITE;

  /** The file {@code file} with a pool of {@code connections} and {@code durability}. */
  JdbcDatabase open(Path file, int connections, Durability durability) {
    return this == H2
        ? H2Database.builder().file(file).maxPoolSize(connections).durability(durability).build()
        : SqliteDatabase.builder().file(file).maxPoolSize(connections).durability(durability)
            .build();
  }

  /** The file the engine keeps the database {@code file} in. */
  Path dataFile(Path file) {
    return file.resolveSibling(file.getFileName() + (this == H2 ? ".mv.db" : ".sqlite"));
  }

  /**
   * Rewrites the closed database {@code file} to its live data with the engine itself, outside
   * the library (which never does: it compacts in bounded steps while the app runs): H2's {@code
   * SHUTDOWN COMPACT}, SQLite's {@code VACUUM}. Every row and index entry, no dead page.
   */
  void compactToLiveData(Path file) throws java.sql.SQLException {
    String url = this == H2 ? "jdbc:h2:file:" + file + ";IFEXISTS=TRUE" : "jdbc:sqlite:"
        + dataFile(file);
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "sa", "");
        java.sql.Statement s = c.createStatement()) {
      s.execute(this == H2 ? "SHUTDOWN COMPACT" : "VACUUM");
    }
  }

  /** The engine's name as a figure's suffix: empty for H2, the default. */
  String suffix() {
    return this == H2 ? "" : " (" + this + ")";
  }

  /** {@code h2} or {@code sqlite} as a command-line argument; H2 when absent. */
  static BenchEngine of(String[] args, int index) {
    return args.length > index && args[index].equalsIgnoreCase("sqlite") ? SQLITE : H2;
  }
}
