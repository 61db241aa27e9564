package dev.outboxreplay.http;

import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxListener;
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
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import okhttp3.HttpUrl;

/**
 * One app instance replaying a shared outbox file, for {@link ConcurrentReplayProcessesTest}.
 * Arguments: database file, receiver base URL, owner name, lease in milliseconds. Prints
 * {@code ready}, waits for a line on stdin, then replays ({@link Replayer#start()} and
 * {@link Replayer#awaitDrained}) until no command is open, printing {@code acked N} (its own
 * running total) after each ack and {@code done N} at the end. Every
 * applied answer is inserted into {@code applied_answer(command_id PRIMARY KEY, owner)} in the
 * ack's transaction, so a second application of one answer would fail loudly.
 */
public final class ReplayProcessChild {
  private ReplayProcessChild() {}

  /**
   * The replayer both replaying children use: the reference server over OkHttp with a call timeout
   * of half the lease, short back-off, and an applier that inserts each applied answer into
   * {@code applied_answer(command_id PRIMARY KEY, owner)}; it calls {@code onAcked} after each
   * ack with the command's id.
   */
  static Replayer<Connection> replayer(OutboxStore<Connection> store, HttpUrl url, String owner,
      Duration lease, int maxAttempts, Consumer<CommandId> onAcked) {
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      try (var ps = tx.prepareStatement("INSERT INTO applied_answer VALUES (?, ?)")) {
        ps.setString(1, command.commandId().toString());
        ps.setString(2, owner);
        ps.executeUpdate();
      }
    };
    RetryPolicy retry = RetryPolicy.builder().initialInterval(Duration.ofMillis(50))
        .maxInterval(Duration.ofMillis(400)).maxAttempts(maxAttempts)
        .random(new SplittableRandom(owner.hashCode())).build();
    return Replayer.builder(store,
            OkHttpTransport.builder(url).callTimeout(lease.dividedBy(2)).build())
        .owner(owner).lease(lease).concurrency(4).batchSize(16).retryPolicy(retry)
        .holdInterval(Duration.ofMillis(100)).responseApplier(applier)
        .listener(new OutboxListener() {
          @Override
          public void onTransition(Transition t) {
            if (t.to() == Status.ACKED) {
              onAcked.accept(t.commandId());
            }
          }
        }).build();
  }

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    HttpUrl url = HttpUrl.get(args[1]);
    String owner = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      System.out.println("ready");
      System.out.flush();
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
      AtomicInteger acked = new AtomicInteger();
      try (Replayer<Connection> replayer = replayer(store, url, owner, lease, 50, id -> {
        System.out.println("acked " + acked.incrementAndGet());
        System.out.flush();
      })) {
        replayer.start();
        replayer.awaitDrained(Duration.ofSeconds(90));
      }
      System.out.println("done " + acked.get());
      System.out.flush();
    }
  }
}
