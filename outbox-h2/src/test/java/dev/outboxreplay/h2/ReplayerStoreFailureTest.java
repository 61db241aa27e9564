package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.AckingTransport;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A started replayer whose store fails for a while (every call, the one that says when the next
 * command is due included) keeps trying by itself, with back-off, and replays once the store
 * works again: no trigger from the app is needed.
 */
class ReplayerStoreFailureTest {
  @TempDir Path dir;

  @Test
  void aReplayerWhoseStoreFailsForAWhileGoesOnByItself() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      OutboxRecord queued = Outbox.builder(store).build()
          .accept(OutboxCommand.of("op", "e", Map.of("n", 1)));
      AtomicBoolean failing = new AtomicBoolean(true);
      AtomicInteger failedCalls = new AtomicInteger();
      @SuppressWarnings("unchecked")
      OutboxStore<Connection> flaky = (OutboxStore<Connection>) Proxy.newProxyInstance(
          OutboxStore.class.getClassLoader(), new Class<?>[] {OutboxStore.class},
          (proxy, method, args) -> {
            // every store operation, whichever group of the SPI declares it
            if (failing.get() && method.getDeclaringClass() != Object.class) {
              failedCalls.incrementAndGet();
              throw new OutboxStorageException("the process serving the file went away (test)",
                  null, true);
            }
            try {
              return method.invoke(store, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
      try (Replayer<Connection> replayer =
          Replayer.builder(flaky, AckingTransport.acking()).build()) {
        replayer.start();
        // A replayer that gave up after its first failed pass makes two failed calls (the pass,
        // then reading when the next command is due) and no more.
        Awaitility.await().atMost(Duration.ofSeconds(30))
            .until(() -> failedCalls.get() >= 4);
        assertThat(store.find(queued.commandId()).orElseThrow().status())
            .isEqualTo(Status.QUEUED);
        failing.set(false);
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
            .until(() -> store.find(queued.commandId()).orElseThrow().status() == Status.ACKED);
      }
    }
  }
}
