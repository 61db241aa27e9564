package dev.outboxreplay.h2;

import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;

/**
 * Child process: with {@code h2-first}, loads H2's classes before the outbox library (as an
 * application that uses H2 itself would), then opens a file in multi-process mode and prints
 * {@code OPENED}, or {@code REFUSED <message>}; with {@code second}, opens a file another
 * process serves, writes to it and prints {@code WROTE}; with {@code together}, prints
 * {@code READY}, waits for a line on stdin, then does the same (so several children open at
 * one moment) and keeps the file open until stdin closes; with {@code together-exit}, the same,
 * but it closes the file and exits right after writing (so openers race with closers too).
 */
public final class OpenLoopbackChild {
  private OpenLoopbackChild() {}

  public static void main(String[] args) throws Exception {
    if (args[1].equals("h2-first")) {
      Class.forName("org.h2.engine.SysProperties"); // H2 reads h2.bindAddress now: unset
    }
    boolean together = args[1].startsWith("together");
    if (together) {
      Class.forName(H2Database.class.getName()); // load before the start line, not after
      System.out.println("READY");
      System.out.flush();
      new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
    }
    try (H2Database db = H2Database.open(Path.of(args[0]))) {
      H2OutboxStore.create(db);
      System.out.println(args[1].equals("h2-first") ? "OPENED" : "WROTE");
      System.out.flush();
      if (args[1].equals("together")) {
        while (System.in.read() >= 0) {
          // keep the file open, as an application would, until stdin closes
        }
      }
    } catch (OutboxStorageException e) {
      System.out.println("REFUSED " + e.getMessage());
    }
    System.out.flush();
  }
}
