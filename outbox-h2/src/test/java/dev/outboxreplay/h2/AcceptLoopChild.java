package dev.outboxreplay.h2;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;

/**
 * Child process for {@link AcceptCrashTest}: accepts commands forever and prints
 * {@code ACK <commandId> <sha256> <round> <n> END} after each {@code accept} returns. After every
 * fifth accept it claims one row, prints {@code TOKEN <fencingToken> END} and gives the row back.
 * It is killed with SIGKILL; it never exits on its own.
 */
public final class AcceptLoopChild {
  private AcceptLoopChild() {}

  /** The payload of command {@code n} in {@code round}; the parent recomputes it to compare. */
  public static String payloadJson(int round, int n) {
    return "{\"n\":" + n + ",\"round\":" + round + ",\"text\":\"" + "x".repeat(n % 64) + "\"}";
  }

  public static void main(String[] args) {
    Path file = Path.of(args[0]);
    int round = Integer.parseInt(args[1]);
    PrintStream out = System.out;
    out.println("OPENING");
    out.flush();
    try (H2Database db = H2Database.builder().file(file).multiProcess(false).build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      for (int n = 0; ; n++) {
        OutboxRecord r = outbox.accept(
            OutboxCommand.ofJson("note.put", "entity-" + (n % 7), payloadJson(round, n)));
        out.println("ACK " + r.commandId() + " " + r.payload().sha256Hex() + " " + round + " "
            + n + " END");
        out.flush();
        if (n % 5 == 4) {
          Instant now = Instant.now();
          for (OutboxRecord held : store.claim("child-" + round, Duration.ofMinutes(10), 1, now)) {
            out.println("TOKEN " + held.fencingToken() + " END");
            out.flush();
            store.release(held.commandId(), held.fencingToken(), now, now);
          }
        }
      }
    }
  }
}
