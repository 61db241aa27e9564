package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.LoopbackPostgres;
import dev.outboxreplay.testkit.LoopbackRelay;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import okhttp3.HttpUrl;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The receiving side for many clients, end to end: two receiver nodes in their own JVMs on one
 * PostgreSQL, behind a relay that spreads connections over both; a client replays 1,000
 * commands over 50 entities while the nodes drop 20% of their answers after committing and one
 * node or the other is SIGKILLed in the middle of requests three times and restarted under its
 * name. Every command ends acked, each effect happened once, and each entity's commands took
 * effect in the order they were accepted.
 */
class PostgresNodesKillTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int ENTITIES = 50;
  private static final int PER_ENTITY = 20;

  @TempDir Path dir;

  @Test
  void aThousandCommandsThroughTwoNodesThreeKillsAndLostAnswersTakeEffectOnceInOrder()
      throws Exception {
    long seed = Seeds.seed("pgnodes.seed", "PostgresNodesKillTest");
    try (LoopbackPostgres postgres = LoopbackPostgres.start()) {
      String database = postgres.newDatabase();
      String url = postgres.jdbcUrl(database);
      List<ChildJvm> nodes = new ArrayList<>();
      nodes.add(startNode(url, "node-1", seed, 0));
      nodes.add(startNode(url, "node-2", seed + 1, 0));
      try (LoopbackRelay relay = new LoopbackRelay(port(nodes.get(0)), port(nodes.get(1)));
          HikariDataSource pool = postgres.pool(database, 2);
          SqliteDatabase client = SqliteDatabase.open(dir.resolve("client"))) {
        NotesApplication notes = NotesApplication.onPostgres(pool);
        SqliteOutboxStore store = SqliteOutboxStore.create(client);
        Outbox<Connection> outbox = Outbox.builder(store).build();
        List<OutboxCommand> commands = new ArrayList<>();
        for (int seq = 1; seq <= PER_ENTITY; seq++) {
          for (int e = 0; e < ENTITIES; e++) {
            commands.add(OutboxCommand.of(NotesApplication.OPERATION, "e-" + e,
                Map.of("entity", "e-" + e, "seq", seq)));
          }
        }
        outbox.acceptAll(commands);

        AtomicInteger unknown = new AtomicInteger();
        long started = System.nanoTime();
        try (Replayer<Connection> replayer = Replayer.builder(store,
                OkHttpTransport.builder(HttpUrl.get(relay.baseUrl())).build())
            .retryPolicy(RetryPolicy.builder().initialInterval(Duration.ofMillis(50))
                .maxInterval(Duration.ofMillis(500)).maxAttempts(1_000).build())
            .holdInterval(Duration.ofMillis(300))
            .listener(new OutboxListener() {
              @Override
              public void onTransition(Transition t) {
                if (t.to() == Status.UNKNOWN) {
                  unknown.incrementAndGet();
                }
              }
            })
            .build()) {
          replayer.start();
          for (int kill = 1; kill <= 3; kill++) {
            long threshold = kill * 250L;
            awaitEffects(notes, threshold);
            int index = kill % 2;
            String name = "node-" + (index + 1);
            nodes.get(index).kill();                        // SIGKILL, requests in flight
            ChildJvm restarted = startNode(url, name, seed + 10 * kill, kill);
            nodes.set(index, restarted);
            relay.moved(index, port(restarted));
          }
          boolean drained = replayer.awaitDrained(Duration.ofMinutes(2));
          if (!drained) {
            for (Status open : List.of(Status.QUEUED, Status.CLAIMED, Status.SENDING,
                Status.RETRYABLE_FAILED, Status.UNKNOWN)) {
              for (var r : store.list(open, 10)) {
                System.out.println("open: " + r + "\n  audit: " + store.auditTrail(r.commandId()));
              }
            }
            for (ChildJvm node : nodes) {
              System.out.println("node stderr: " + node.stderrText());
            }
          }
          assertThat(drained)
              .as("every command delivered; outbox now %s", store.countByStatus()).isTrue();
        } finally {
          for (ChildJvm node : nodes) {
            node.close();
          }
        }
        System.out.printf("1,000 commands over 2 PostgreSQL nodes, 3 kills, 20%% answers "
            + "dropped: %d ms, %d transitions to unknown (seed %d)%n",
            (System.nanoTime() - started) / 1_000_000, unknown.get(), seed);
        assertThat(store.countByStatus()).containsEntry(Status.ACKED, 1_000L);
        assertThat(unknown.get()).as("answers lost to drops and kills").isPositive();
        assertThat(notes.totalEffects()).isEqualTo(1_000);
        assertThat(notes.keysAppliedMoreThanOnce()).isZero();
        List<Long> inOrder = LongStream.rangeClosed(1, PER_ENTITY).boxed().toList();
        for (int e = 0; e < ENTITIES; e++) {
          assertThat(notes.arrivalOrder("e-" + e)).as("e-%d's effects in arrival order", e)
              .isEqualTo(inOrder);
        }
      }
    }
  }

  private ChildJvm startNode(String url, String name, long seed, int generation)
      throws Exception {
    return ChildJvm.start(PostgresNodeChild.class,
        dir.resolve(name + "-" + generation + ".err"), url, name, "20", Long.toString(seed));
  }

  private static int port(ChildJvm node) throws Exception {
    String line = node.nextLine(WAIT);
    assertThat(line).startsWith("PORT ");
    return Integer.parseInt(line.substring(5));
  }

  private static void awaitEffects(NotesApplication notes, long atLeast) {
    Awaitility.await("at least " + atLeast + " effects").atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(20)).until(notes::totalEffects, n -> n >= atLeast);
  }
}
