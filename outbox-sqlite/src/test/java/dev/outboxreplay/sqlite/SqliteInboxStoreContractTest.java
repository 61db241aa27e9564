package dev.outboxreplay.sqlite;

import dev.outboxreplay.InboxStore;
import dev.outboxreplay.testkit.jdbc.JdbcInboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;

/** Runs the inbox store contract against a SQLite file database. */
class SqliteInboxStoreContractTest extends JdbcInboxStoreContract<SqliteDatabase> {
  @Override
  protected SqliteDatabase openDatabase(Path file) {
    return SqliteDatabase.open(file);
  }

  @Override
  protected InboxStore<Connection> createStore(SqliteDatabase database) {
    return SqliteInboxStore.create(database);
  }
}
