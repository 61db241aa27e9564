package dev.outboxreplay.h2;

import dev.outboxreplay.InboxStore;
import dev.outboxreplay.testkit.jdbc.JdbcInboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;

/** Runs the inbox store contract against an H2 file database. */
class H2InboxStoreContractTest extends JdbcInboxStoreContract<H2Database> {
  @Override
  protected H2Database openDatabase(Path file) {
    return H2Database.open(file);
  }

  @Override
  protected InboxStore<Connection> createStore(H2Database database) {
    return H2InboxStore.create(database);
  }
}
