package dev.outboxreplay.examples.notes;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteInboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;

/** Edits from the user's other devices, delivered at least once, each taken in at most once. */
public final class IncomingEdits {
  private final Inbox<Connection> inbox;

  public IncomingEdits(SqliteDatabase db) {
    db.inTransaction(tx -> {
      try (Statement s = tx.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS device (id TEXT PRIMARY KEY, seen INTEGER)");
        return s.execute("CREATE TABLE IF NOT EXISTS note (id TEXT PRIMARY KEY, "
            + "body TEXT NOT NULL, sending TEXT)");
      }
    });
    this.inbox = Inbox.builder(SqliteInboxStore.create(db),
        (Connection tx, InboxMessage m) -> {              // runs once per message, in the
          try (PreparedStatement ps = tx.prepareStatement( // transaction that records it
              "INSERT INTO device VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET seen = seen + 1")) {
            ps.setString(1, m.scope());                   // e.g. a ratchet that moves forward
            ps.executeUpdate();
          }
          return m.bytes();                               // staged: "note-id TAB text"
        },
        (device, messageId, staged) -> db.inTransaction(tx -> {      // may run again: idempotent
          String[] edit = new String(staged, StandardCharsets.UTF_8).split("\t", 2);
          try (PreparedStatement ps = tx.prepareStatement("INSERT INTO note (id, body) "
              + "VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body")) {
            ps.setString(1, edit[0]);
            ps.setString(2, edit[1]);
            return ps.executeUpdate();
          }
        }))
        .build();                                         // projects what a kill left staged
  }

  /** CONSUMED the first time; DUPLICATE for each delivery after it. */
  public ReceiveResult receive(String device, String messageId, byte[] edit) {
    return inbox.receive(device, messageId, edit);
  }

  public static void main(String[] args) {
    try (SqliteDatabase db = SqliteDatabase.open(Path.of("data", "notes"))) {
      IncomingEdits incoming = new IncomingEdits(db);
      byte[] edit = "note-2\tcall mum".getBytes(StandardCharsets.UTF_8);
      System.out.println(incoming.receive("phone", "msg-17", edit).outcome()   // CONSUMED
          + " " + incoming.receive("phone", "msg-17", edit).outcome());        // DUPLICATE
    }
  }
}
