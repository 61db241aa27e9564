package dev.outboxreplay.server;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.testkit.jdbc.JdbcIdempotencyRecordStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import javax.sql.DataSource;

/** The receiver's records on an H2 file, two nodes opening it through one {@link H2Database}. */
class H2IdempotencyRecordsContractTest extends JdbcIdempotencyRecordStoreContract {
  private H2Database db;

  @Override
  protected IdempotencyRecordStore<Connection> openStore(Path directory, String node) {
    if (db == null) {
      db = H2Database.open(directory.resolve("server"));
    }
    return JdbcIdempotencyRecords.onH2(db, node, LEASE);
  }

  @Override
  protected DataSource sharedDatabase() {
    return db.dataSource();
  }

  @Override
  protected void closeAll() {
    if (db != null) {
      db.close();
      db = null;
    }
  }
}
