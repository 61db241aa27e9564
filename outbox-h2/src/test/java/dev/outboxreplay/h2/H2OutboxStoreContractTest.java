package dev.outboxreplay.h2;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.testkit.jdbc.JdbcOutboxStoreContract;
import java.nio.file.Path;

/** Runs the store contract against an H2 file database. */
class H2OutboxStoreContractTest extends JdbcOutboxStoreContract {
  @Override
  protected JdbcDatabase openDatabase(Path file) {
    return H2Database.open(file);
  }
}
