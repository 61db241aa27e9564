package dev.outboxreplay.examples;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Map;

/**
 * The README's quick start, runnable: a local change and its outbox row commit in one
 * transaction on the application's own H2 file. Run with a database path argument.
 */
public final class QuickStart {
  private QuickStart() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args.length > 0 ? args[0] : "quickstart-data/app");
    try (H2Database db = H2Database.open(file)) {                  // WRITE_DELAY=0, pooled
      Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS note (id VARCHAR PRIMARY KEY, body VARCHAR)");
      }
      OutboxRecord queued = db.inTransaction(tx -> {               // the app's own transaction
        try (PreparedStatement ps = tx.prepareStatement("MERGE INTO note KEY (id) VALUES (?, ?)")) {
          ps.setString(1, "note-1");
          ps.setString(2, "buy milk");
          ps.executeUpdate();
        }
        return outbox.accept(tx,                                   // joins that transaction
            OutboxCommand.of("note.put", "note-1", Map.of("id", "note-1", "body", "buy milk")));
      });                                     // committed: both durable, or neither; checked
      System.out.println("queued " + queued.commandId() + " key " + queued.idempotencyKey()
          + " payload " + queued.payload().json());
      System.out.println("outbox: " + outbox.store().countByStatus());
    }
  }
}
