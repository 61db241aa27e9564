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

  /** {@code h2} or {@code sqlite} as a command-line argument; H2 when absent. */
  static BenchEngine of(String[] args, int index) {
    return args.length > index && args[index].equalsIgnoreCase("sqlite") ? SQLITE : H2;
  }
}
