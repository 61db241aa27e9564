package dev.outboxreplay.examples.notes;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/** The app's notes: an edit and the command that sends it commit in one transaction. */
public final class Notes {
  private final SqliteDatabase db;
  private final Outbox<Connection> outbox;

  public Notes(SqliteDatabase db) {
    this.db = db;
    this.outbox = Outbox.builder(SqliteOutboxStore.create(db)).build();
    db.inTransaction(tx -> {
      try (Statement s = tx.createStatement()) {          // sending: the edit not yet acked
        return s.execute("CREATE TABLE IF NOT EXISTS note (id TEXT PRIMARY KEY, "
            + "body TEXT NOT NULL, sending TEXT)");
      }
    });
  }

  /** Saves an edit and queues its command: both durable when this returns, or neither. */
  public OutboxRecord save(String id, String body) {
    OutboxCommand command = OutboxCommand.of("note.put", id, Map.of("id", id, "body", body))
        .withCommandId(CommandId.generate());             // chosen once, before the first try
    try {
      return saveIn(id, body, command);
    } catch (OutboxStorageException e) {                  // e.g. the commit's outcome is unknown
      if (!e.retryable()) {
        throw e;
      }
      return saveIn(id, body, command);                   // same id: never queued twice
    }
  }

  private OutboxRecord saveIn(String id, String body, OutboxCommand command) {
    return db.inTransaction(tx -> {
      try (PreparedStatement ps = tx.prepareStatement("INSERT INTO note (id, body, sending) "
          + "VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body, "
          + "sending = excluded.sending")) {
        ps.setString(1, id);
        ps.setString(2, body);
        ps.setString(3, command.commandId().toString());
        ps.executeUpdate();
      }
      return outbox.accept(tx, command);                 // joins the app's transaction
    });
  }

  /** The replayer calls this in the ack's transaction: synced once its last edit is acked. */
  public void markSynced(Connection tx, OutboxRecord acked) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(
        "UPDATE note SET sending = NULL WHERE id = ? AND sending = ?")) {
      ps.setString(1, acked.entityKey());
      ps.setString(2, acked.commandId().toString());
      ps.executeUpdate();
    }
  }

  public static void main(String[] args) {
    try (SqliteDatabase db = SqliteDatabase.open(Path.of("data", "notes"))) { // data/notes.sqlite
      OutboxRecord queued = new Notes(db).save("note-1", "buy milk");
      System.out.println("saved note-1; " + queued.status() + " as " + queued.commandId());
    }
  }
}
