package dev.outboxreplay.h2;

import java.nio.file.Path;

/**
 * Child process: opens a database in multi-process mode first, so it serves the file to the
 * others, says READY, and holds it until killed or stdin closes.
 */
public final class ServeFileChild {
  private ServeFileChild() {}

  public static void main(String[] args) throws Exception {
    try (H2Database db = H2Database.open(Path.of(args[0]))) {
      H2OutboxStore.create(db);
      System.out.println("READY");
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold the file open
      }
    }
  }
}
