package dev.outboxreplay.h2;

import java.nio.file.Path;

/** Child process: opens a database exclusively, says READY, and holds it until stdin closes. */
public final class HoldDatabaseOpenChild {
  private HoldDatabaseOpenChild() {}

  public static void main(String[] args) throws Exception {
    try (H2Database db = H2Database.builder().file(Path.of(args[0])).multiProcess(false).build()) {
      H2OutboxStore.create(db);
      System.out.println("READY");
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold the file open
      }
    }
  }
}
