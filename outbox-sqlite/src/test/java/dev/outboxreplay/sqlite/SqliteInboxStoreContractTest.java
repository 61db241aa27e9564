package dev.outboxreplay.sqlite;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.testkit.jdbc.JdbcInboxStoreContract;
import java.nio.file.Path;

/** Runs the inbox store contract against a SQLite file database. */
class SqliteInboxStoreContractTest extends JdbcInboxStoreContract {
  @Override
  protected JdbcDatabase openDatabase(Path file) {
    return SqliteDatabase.open(file);
  }
}
