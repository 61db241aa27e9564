package dev.outboxreplay.http;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import java.nio.file.Path;

/** The embedded engines the same test runs on, opened as one process's file. */
enum Engine {
  H2 {
    @Override
    JdbcDatabase open(Path base) {
      return H2Database.builder().file(base).multiProcess(false).build();
    }

    @Override
    JdbcOutboxStore outbox(JdbcDatabase database) {
      return H2OutboxStore.create((H2Database) database);
    }
  },
  SQLITE {
    @Override
    JdbcDatabase open(Path base) {
      return SqliteDatabase.open(base);
    }

    @Override
    JdbcOutboxStore outbox(JdbcDatabase database) {
      return SqliteOutboxStore.create((SqliteDatabase) database);
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

  /** The outbox store on an open database of this engine. */
  abstract JdbcOutboxStore outbox(JdbcDatabase database);

  /** Closes what {@link #open} returned. */
  static void close(JdbcDatabase database) {
    try {
      ((AutoCloseable) database).close();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
