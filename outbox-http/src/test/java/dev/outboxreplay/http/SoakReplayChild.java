package dev.outboxreplay.http;

import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.Replayer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import okhttp3.HttpUrl;

/**
 * The app instance that replays a shared outbox file, for {@link OutboxSoakTest}. Arguments:
 * database file, receiver base URL, instance name, lease in milliseconds, engine. Starts a replayer
 * ({@link ReplayProcessChild#replayer}), prints {@code READY}, and {@code ACKED <commandId>}
 * after each ack. A line {@code drain} on stdin makes it wait until no command is open, print
 * {@code DRAINED <true|false>}, close and exit.
 */
public final class SoakReplayChild {
  private SoakReplayChild() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    HttpUrl url = HttpUrl.get(args[1]);
    String owner = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    Engine engine = Engine.valueOf(args[4]);
    JdbcDatabase db = engine.openShared(file);
    try (Replayer<Connection> replayer = ReplayProcessChild.replayer(JdbcOutboxStore.create(db),
            url, owner, lease, 1000, id -> {
              System.out.println("ACKED " + id);
              System.out.flush();
            })) {
      replayer.start();
      System.out.println("READY");
      System.out.flush();
      BufferedReader in = new BufferedReader(
          new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.equals("drain")) {
          System.out.println("DRAINED " + replayer.awaitDrained(Duration.ofSeconds(120)));
          System.out.flush();
          break;
        }
      }
    } finally {
      db.close();
    }
  }
}
