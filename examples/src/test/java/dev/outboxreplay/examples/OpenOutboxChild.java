package dev.outboxreplay.examples;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.Map;

/**
 * Child process: an app that keeps an outbox file open (H2 with other processes allowed, or
 * SQLite), says READY, and accepts commands while it runs: a line {@code accept N} accepts N
 * commands and answers {@code accepted TOTAL}; a line {@code count} answers the commands the
 * file holds. Closes the file when stdin closes.
 */
public final class OpenOutboxChild {
  private OpenOutboxChild() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[1]);
    boolean h2 = args[0].equals("h2");
    try (JdbcDatabase db = h2 ? H2Database.open(file) : SqliteDatabase.open(file)) {
      OutboxStore<Connection> store = h2 ? H2OutboxStore.create((H2Database) db)
          : SqliteOutboxStore.create((SqliteDatabase) db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      System.out.println("READY");
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
          StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        if (line.startsWith("accept ")) {
          for (int i = 0; i < Integer.parseInt(line.substring(7)); i++) {
            outbox.accept(OutboxCommand.of("note.put", "n-" + i, Map.of("entity", "n-" + i,
                "seq", 1)));
          }
        }
        long total = store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
        System.out.println((line.startsWith("accept ") ? "accepted " : "count ") + total);
        System.out.flush();
      }
    }
  }
}
