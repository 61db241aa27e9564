package dev.outboxreplay.http;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.server.NotesApplication;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import okhttp3.HttpUrl;

/**
 * A client process that dies exactly at a failure point, for {@link FailurePointKillTest}.
 * Arguments: database file, receiver base URL, failure point label (or {@code none}), which call
 * of that point halts, how many commands to accept, the number of the first, a prefix for entity
 * names, and the engine ({@link Engine}). It accepts its
 * commands (printing {@code ACK <id> <entity> <seq>} after each accept returns), then replays
 * until nothing is open and prints {@code DRAINED <true|false>}. At the chosen call of the point
 * it halts the JVM at once ({@link Runtime#halt}: no shutdown hook, no finally, no close), as a
 * power switch would, and exits 137.
 */
public final class HaltAtPointChild {
  static final int HALTED = 137;
  static final int ENTITIES = 4;

  private HaltAtPointChild() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    HttpUrl url = HttpUrl.get(args[1]);
    FailurePoint target = args[2].equals("none") ? null : pointNamed(args[2]);
    int haltAtCall = Integer.parseInt(args[3]);
    int accepts = Integer.parseInt(args[4]);
    int first = Integer.parseInt(args[5]);
    String entities = args[6];
    Engine engine = Engine.valueOf(args[7]);
    int[] calls = {0};
    FailureInjector halter = point -> {
      if (point == target && ++calls[0] == haltAtCall) {
        System.out.flush();
        Runtime.getRuntime().halt(HALTED);
      }
    };
    JdbcDatabase db = engine.open(file);
    try {
      JdbcOutboxStore store = JdbcOutboxStore.create(db);
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS applied_answer "
            + "(command_id VARCHAR(36) PRIMARY KEY, status INT)");
      }
      Outbox<Connection> outbox = Outbox.builder(store).failureInjector(halter).build();
      for (int seq = first; seq < first + accepts; seq++) {
        String entity = entities + (seq % ENTITIES);
        OutboxRecord r = outbox.accept(OutboxCommand.of(NotesApplication.OPERATION, entity,
            Map.of("entity", entity, "seq", seq, "body", "note " + seq)));
        System.out.println("ACK " + r.commandId() + " " + entity + " " + seq);
        System.out.flush();
      }
      ResponseApplier<Connection> applier = (tx, command, response) -> {
        try (var ps = tx.prepareStatement("INSERT INTO applied_answer VALUES (?, ?)")) {
          ps.setString(1, command.commandId().toString());
          ps.setInt(2, response.status());
          ps.executeUpdate();
        }
      };
      Duration lease = Duration.ofMillis(800);
      try (Replayer<Connection> replayer = Replayer.builder(store, OkHttpTransport.builder(url)
              .callTimeout(Duration.ofMillis(400)).failureInjector(halter).build())
          .owner("halting-" + first).lease(lease).concurrency(2).batchSize(8)
          .holdInterval(Duration.ofMillis(100)).failureInjector(halter).responseApplier(applier)
          .retryPolicy(RetryPolicy.builder().initialInterval(Duration.ofMillis(20))
              .maxInterval(Duration.ofMillis(200)).maxAttempts(10_000)
              .random(new SplittableRandom(first)).build())
          .build()) {
        replayer.start();
        System.out.println("DRAINED " + replayer.awaitDrained(Duration.ofSeconds(60)));
        System.out.flush();
      }
    } finally {
      db.close();
    }
  }


  private static FailurePoint pointNamed(String label) {
    for (FailurePoint p : FailurePoint.values()) {
      if (p.label().equals(label)) {
        return p;
      }
    }
    throw new IllegalArgumentException("no failure point " + label);
  }
}
