package dev.outboxreplay.examples;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.nio.file.Path;

/**
 * Child process: opens an outbox file for itself alone (no other process may open it), says
 * READY, and holds it until stdin closes, as an app started with multiProcess(false) would.
 */
public final class HoldFileChild {
  private HoldFileChild() {}

  public static void main(String[] args) throws Exception {
    try (H2Database db = H2Database.builder().file(Path.of(args[0])).multiProcess(false)
        .build()) {
      H2OutboxStore.create(db);
      System.out.println("READY");
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold the file
      }
    }
  }
}
