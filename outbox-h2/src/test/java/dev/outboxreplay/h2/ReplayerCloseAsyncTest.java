package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.AckingTransport;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A UI thread closes the replayer while a request hangs: {@code closeAsync} returns without
 * waiting for it, and its future completes once the request ends and the replayer stopped.
 */
class ReplayerCloseAsyncTest {
  @TempDir Path dir;

  @Test
  void closeAsyncReturnsWhileARequestHangsAndCompletesWhenItEnds() throws Exception {
    CountDownLatch sending = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    AckingTransport hanging = AckingTransport.acking(command -> {
      sending.countDown();
      try {
        answer.await(); // a receiver that does not answer until told to
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      outbox.accept(OutboxCommand.of("note.put", "n1", Map.of("v", 1)));
      Replayer<Connection> replayer = Replayer.builder(store, hanging).build();
      try {
        replayer.start();
        assertThat(sending.await(60, TimeUnit.SECONDS)).as("the request went out").isTrue();

        // close() here would wait for the hanging request; the answer comes only after return
        CompletableFuture<Void> closing =
            assertTimeoutPreemptively(Duration.ofSeconds(20), replayer::closeAsync);
        assertThat(closing).as("still waiting for the request in flight").isNotDone();

        answer.countDown();
        closing.get(60, TimeUnit.SECONDS);
        assertThat(closing).isCompleted();
        assertThat(store.countByStatus().get(Status.ACKED)
            + store.countByStatus().get(Status.SENDING)).as("acked, or left to its lease")
            .isEqualTo(1L);
      } finally {
        answer.countDown();
        replayer.close(); // harmless after closeAsync
      }
    }
  }
}
