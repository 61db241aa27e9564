package dev.outboxreplay.sqlite;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.testkit.jdbc.JdbcOutboxStoreContract;
import java.nio.file.Path;

/** Runs the store contract against a SQLite file database. */
class SqliteOutboxStoreContractTest extends JdbcOutboxStoreContract {
  @Override
  protected JdbcDatabase openDatabase(Path file) {
    return SqliteDatabase.open(file);
  }
}
