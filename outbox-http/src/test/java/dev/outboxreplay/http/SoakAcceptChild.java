package dev.outboxreplay.http;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.server.NotesApplication;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One app instance accepting commands into a shared outbox file, for {@link OutboxSoakTest}.
 * Arguments: database file, instance name, milliseconds between accepts, engine ({@link
 * Engine}). Prints {@code READY},
 * then accepts {@code note.put} commands for entities {@code <name>-0..2} with increasing
 * {@code seq}, printing {@code ACK <commandId> <entity> <seq> <millis> END} after each accept
 * returns (with how long it took) or {@code FAILED <millis> <error>} when one throws (then it goes
 * on). A line {@code stop} on stdin (or its end) makes it close the file, print {@code STOPPED}
 * and exit.
 */
public final class SoakAcceptChild {
  private SoakAcceptChild() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    String name = args[1];
    long pauseMillis = Long.parseLong(args[2]);
    AtomicBoolean stop = new AtomicBoolean();
    Thread stdin = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(
          new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null && !line.equals("stop");
            line = in.readLine()) {
          // wait for stop
        }
      } catch (java.io.IOException ignored) {
        // stdin gone: stop
      }
      stop.set(true);
    });
    stdin.setDaemon(true);
    Engine engine = Engine.valueOf(args[3]);
    JdbcDatabase db = engine.openShared(file);
    try {
      Outbox<Connection> outbox = Outbox.builder(JdbcOutboxStore.create(db)).build();
      System.out.println("READY");
      System.out.flush();
      stdin.start();
      for (int n = 0; !stop.get(); n++) {
        String entity = name + "-" + (n % 3);
        long seq = n / 3;
        long start = System.nanoTime();
        try {
          OutboxRecord r = outbox.accept(OutboxCommand.of(NotesApplication.OPERATION, entity,
              Map.of("entity", entity, "seq", seq, "body", "note " + n)));
          System.out.println("ACK " + r.commandId() + " " + entity + " " + seq + " "
              + (System.nanoTime() - start) / 1_000_000 + " END");
        } catch (RuntimeException e) {
          System.out.println("FAILED " + (System.nanoTime() - start) / 1_000_000 + " "
              + e.toString().replace('\n', ' '));
        }
        System.out.flush();
        Thread.sleep(pauseMillis);
      }
    } finally {
      db.close();
    }
    System.out.println("STOPPED");
    System.out.flush();
  }
}
