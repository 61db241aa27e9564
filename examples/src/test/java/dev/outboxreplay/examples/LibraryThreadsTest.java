package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.HttpConnectivityMonitor;
import dev.outboxreplay.http.OkHttpTransport;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import okhttp3.HttpUrl;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Every thread the library and its parts start while an application runs (the pool, H2's
 * multi-process server, the replayer, its senders, the connectivity monitor, OkHttp, the
 * reference server's Jetty threads and workers) is a daemon thread, so none keeps the JVM alive,
 * and none is left after {@code close()}.
 */
@Isolated("it counts the threads of the whole JVM")
class LibraryThreadsTest {
  @TempDir Path dir;

  @Test
  void everyThreadTheLibraryStartsIsADaemon() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    List<Thread> started;
    try (GuideExamples.RunningServer running = GuideExamples.server(dir.resolve("server"));
        H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      OutboxRecord r = Outbox.builder(store).build()
          .accept(OutboxCommand.of("note.put", "note-1", Map.of("id", "note-1")));
      HttpUrl baseUrl = HttpUrl.get(running.server().baseUrl());
      try (Replayer<Connection> replayer = Replayer.builder(store,
              OkHttpTransport.builder(baseUrl).build())
          .connectivityMonitor(new HttpConnectivityMonitor(baseUrl, Duration.ofMillis(50),
              Duration.ofSeconds(1)))
          .build()) {
        replayer.start();
        assertThat(replayer.awaitTerminal(r.commandId(), Duration.ofSeconds(30))).isPresent();
        started = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> !before.contains(t) && t.isAlive()).toList();
      }
      Set<String> names = started.stream().map(Thread::getName).collect(Collectors.toSet());
      System.out.println("threads started: " + names);
      assertThat(names).as("the parts this test means to cover did start threads")
          .anyMatch(n -> n.startsWith("outbox-replayer-"))
          .anyMatch(n -> n.startsWith("outbox-sender-"))
          .anyMatch(n -> n.startsWith("idempotent-server-io"))
          .anyMatch(n -> n.startsWith("idempotent-server-scheduler"));
      assertThat(started.stream().filter(t -> !t.isDaemon() && t.isAlive())
          .map(Thread::getName).toList())
          .as("non-daemon threads").isEmpty();
    }
    Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(started.stream().filter(t -> t.isAlive() && !t.isDaemon())
            .map(Thread::getName).toList())
            .as("after close, no non-daemon thread of the library is left").isEmpty());
  }
}
