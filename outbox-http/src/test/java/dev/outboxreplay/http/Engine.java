package dev.outboxreplay.http;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.sqlite.SqliteDatabase;
import java.nio.file.Path;

/** The embedded engines the same test runs on, opened as one process's file. */
enum Engine {
  H2 {
    @Override
    JdbcDatabase open(Path base) {
      return H2Database.builder().file(base).multiProcess(false).build();
    }
  },
  SQLITE {
    @Override
    JdbcDatabase open(Path base) {
      return SqliteDatabase.open(base);
    }
  };

  /** Opens the file at {@code base} for this process alone, creating it if missing. */
  abstract JdbcDatabase open(Path base);

  /**
   * Opens the file at {@code base} to share with other processes (H2's multi-process mode;
   * SQLite always shares), creating it if missing; the caller closes it.
   */
  JdbcDatabase openShared(Path base) {
    return this == H2 ? H2Database.open(base) : open(base);
  }
}
