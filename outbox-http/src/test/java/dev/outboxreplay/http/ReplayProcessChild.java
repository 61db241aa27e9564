package dev.outboxreplay.http;

import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import okhttp3.HttpUrl;

/**
 * One app instance replaying a shared outbox file, for {@link ConcurrentReplayProcessesTest}.
 * Arguments: database file, receiver base URL, owner name, lease in milliseconds. Prints
 * {@code ready}, waits for a line on stdin, then replays until no command is open, printing
 * {@code acked N} (its own running total) after each pass and {@code done N} at the end. Every
 * applied answer is inserted into {@code applied_answer(command_id PRIMARY KEY, owner)} in the
 * ack's transaction, so a second application of one answer would fail loudly.
 */
public final class ReplayProcessChild {
  private ReplayProcessChild() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    HttpUrl url = HttpUrl.get(args[1]);
    String owner = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      ResponseApplier<Connection> applier = (tx, command, response) -> {
        try (var ps = tx.prepareStatement("INSERT INTO applied_answer VALUES (?, ?)")) {
          ps.setObject(1, command.commandId().value());
          ps.setString(2, owner);
          ps.executeUpdate();
        }
      };
      RetryPolicy retry = RetryPolicy.builder().initialInterval(Duration.ofMillis(50))
          .maxInterval(Duration.ofMillis(400)).maxAttempts(50)
          .random(new SplittableRandom(owner.hashCode())).build();
      System.out.println("ready");
      System.out.flush();
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
      int acked = 0;
      Instant deadline = Instant.now().plusSeconds(90);
      try (Replayer<Connection> replayer = Replayer.builder(store,
              OkHttpTransport.builder(url).callTimeout(lease.dividedBy(2)).build())
          .owner(owner).lease(lease).concurrency(4).batchSize(16).retryPolicy(retry)
          .holdInterval(Duration.ofMillis(100)).responseApplier(applier).build()) {
        while (Status.countOpen(store.countByStatus()) > 0 && Instant.now().isBefore(deadline)) {
          PassSummary pass = replayer.runPass();
          acked += pass.acked();
          System.out.println("acked " + acked);
          System.out.flush();
          if (pass.idle()) {
            // Not Replayer.start(): its timer wakes at this process's next due time only, so an
            // instance that finds every entity head held by the other one idles until a lease
            // ends (tried: the doomed instance then acked nothing before its kill). Polling keeps
            // both contending. Real time: retries and leases fall due on the wall clock.
            long wait = store.nextDueAt()
                .map(due -> Duration.between(Instant.now(), due).toMillis()).orElse(100L);
            Thread.sleep(Math.max(5, Math.min(wait, 100)));
          }
        }
      }
      System.out.println("done " + acked);
      System.out.flush();
    }
  }
}
