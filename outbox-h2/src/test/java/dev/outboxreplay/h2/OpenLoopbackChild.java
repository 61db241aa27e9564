package dev.outboxreplay.h2;

import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;

/**
 * Child process: with {@code h2-first}, loads H2's classes before the outbox library (as an
 * application that uses H2 itself would), then opens a file in multi-process mode and prints
 * {@code OPENED}, or {@code REFUSED <message>}; with {@code second}, opens a file another
 * process serves, writes to it and prints {@code WROTE}.
 */
public final class OpenLoopbackChild {
  private OpenLoopbackChild() {}

  public static void main(String[] args) throws Exception {
    if (args[1].equals("h2-first")) {
      Class.forName("org.h2.engine.SysProperties"); // H2 reads h2.bindAddress now: unset
    }
    try (H2Database db = H2Database.open(Path.of(args[0]))) {
      H2OutboxStore.create(db);
      System.out.println(args[1].equals("second") ? "WROTE" : "OPENED");
    } catch (OutboxStorageException e) {
      System.out.println("REFUSED " + e.getMessage());
    }
    System.out.flush();
  }
}
