package dev.outboxreplay.h2;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.testkit.jdbc.JdbcInboxStoreContract;
import java.nio.file.Path;

/** Runs the inbox store contract against an H2 file database. */
class H2InboxStoreContractTest extends JdbcInboxStoreContract {
  @Override
  protected JdbcDatabase openDatabase(Path file) {
    return H2Database.open(file);
  }
}
