package dev.outboxreplay.server;

import dev.outboxreplay.h2.H2Database;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Child process for {@link ServerCrashTest}: runs the reference server on a free port and prints
 * {@code PORT n}. Arguments after the database path name keys to stall: {@code before:KEY}
 * stalls inside that key's business transaction, {@code after:KEY} right after its commit; each
 * prints {@code STALLED KEY} first, so the test knows when to kill.
 */
public final class ServerChild {
  private ServerChild() {}

  public static void main(String[] args) throws Exception {
    CountDownLatch never = new CountDownLatch(1);
    java.util.Set<String> stallBefore = new java.util.HashSet<>();
    java.util.Set<String> stallAfter = new java.util.HashSet<>();
    for (int i = 1; i < args.length; i++) {
      if (args[i].startsWith("before:")) {
        stallBefore.add(args[i].substring(7));
      } else if (args[i].startsWith("after:")) {
        stallAfter.add(args[i].substring(6));
      }
    }
    H2Database db = H2Database.builder().file(Path.of(args[0])).multiProcess(false).build();
    NotesApplication notes = new NotesApplication(db);
    IdempotentServer server = IdempotentServer.builder().database(db)
        .handler(NotesApplication.OPERATION, notes.handler())
        .faults(request -> {
          Runnable stall = () -> {
            System.out.println("STALLED " + request.idempotencyKey());
            System.out.flush();
            try {
              never.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          };
          if (stallBefore.contains(request.idempotencyKey())) {
            return FaultPlan.Fault.beforeCommit(stall);
          }
          if (stallAfter.contains(request.idempotencyKey())) {
            return FaultPlan.Fault.afterCommit(stall);
          }
          return FaultPlan.Fault.NONE;
        })
        .start();
    System.out.println("PORT " + server.port());
    System.out.flush();
    never.await();
  }
}
