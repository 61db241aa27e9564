package dev.outboxreplay.http;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ReplayerBuilder;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import okhttp3.HttpUrl;

/**
 * A client outbox file, the reference server on loopback with its own file, a manual clock and a
 * mutable session: everything real except time. The server counts the POSTs it receives per key;
 * the applier writes each applied answer to a local table.
 */
final class ReplayFixture implements AutoCloseable {
  final ManualClock clock = ManualClock.startingAtEpoch2026();
  final AtomicReference<SessionRuntime.Snapshot> session = new AtomicReference<>(
      new SessionRuntime.Snapshot("default", 0, false, "token-1"));
  final AtomicReference<FaultPlan> faults = new AtomicReference<>(FaultPlan.NONE);
  final Map<String, AtomicInteger> postsPerKey = new ConcurrentHashMap<>();
  final AtomicInteger applied = new AtomicInteger();
  final List<OutboxListener.Transition> transitions = new CopyOnWriteArrayList<>();
  final List<String> poisoned = new CopyOnWriteArrayList<>();
  final H2Database clientDb;
  final H2Database serverDb;
  final H2OutboxStore store;
  final Outbox<Connection> outbox;
  final NotesApplication notes;
  final IdempotentServer server;
  final OkHttpTransport transport;

  ReplayFixture(Path dir) throws Exception {
    clientDb = H2Database.open(dir.resolve("client"));
    serverDb = H2Database.open(dir.resolve("server"));
    store = H2OutboxStore.create(clientDb);
    outbox = Outbox.builder(store).clock(clock).random(new SplittableRandom(1))
        .sessionVersion(() -> session.get().version()).build();
    try (Connection c = clientDb.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE applied_answer (command_id UUID PRIMARY KEY, status INT)");
    }
    notes = new NotesApplication(serverDb);
    server = IdempotentServer.builder().database(serverDb)
        .handler(NotesApplication.OPERATION, notes.handler())
        .faults(request -> {
          postsPerKey.computeIfAbsent(request.idempotencyKey(), k -> new AtomicInteger())
              .incrementAndGet();
          return faults.get().onRequest(request);
        })
        .start();
    transport = OkHttpTransport.builder(HttpUrl.get(server.baseUrl()))
        .callTimeout(Duration.ofSeconds(20)).clock(clock).build();
  }

  Replayer<Connection> replayer(String owner, UnaryOperator<ReplayerBuilder<Connection>> tune) {
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      applied.incrementAndGet();
      try (var ps = tx.prepareStatement("INSERT INTO applied_answer VALUES (?, ?)")) {
        ps.setObject(1, command.commandId().value());
        ps.setInt(2, response.status());
        ps.executeUpdate();
      }
    };
    return tune.apply(Replayer.builder(store, transport).owner(owner).clock(clock)
        .session(session::get).responseApplier(applier)
        .retryPolicy(RetryPolicy.builder().random(new SplittableRandom(7))
            .initialInterval(Duration.ofSeconds(1)).maxInterval(Duration.ofMinutes(1))
            .maxRetryAfter(Duration.ofHours(2)).build())
        .lease(Duration.ofSeconds(30)).holdInterval(Duration.ofSeconds(5))
        .listener(new OutboxListener() {
          @Override
          public void onTransition(Transition t) {
            transitions.add(t);
          }

          @Override
          public void onPoison(OutboxRecord command, Reason reason) {
            poisoned.add(command.entityKey() + ":" + reason);
          }
        })).build();
  }

  Replayer<Connection> replayer() {
    return replayer("replayer-1", b -> b);
  }

  OutboxRecord accept(String entity, int seq) {
    return outbox.accept(OutboxCommand.of(NotesApplication.OPERATION, entity,
        Map.of("entity", entity, "seq", seq, "body", "note " + seq)));
  }

  /**
   * The listener saw every change the audit trail records for {@code r}, in order, with the same
   * statuses, token and reason.
   */
  void assertListenerSawWhatTheAuditRecorded(OutboxRecord r) {
    org.assertj.core.api.Assertions.assertThat(transitions.stream()
            .filter(t -> t.commandId().equals(r.commandId()))
            .map(t -> t.from() + ">" + t.to() + ":" + t.reason() + "@" + t.fencingToken()))
        .containsExactlyElementsOf(store.auditTrail(r.commandId()).stream()
            .map(e -> e.from() + ">" + e.to() + ":" + e.reason() + "@" + e.fencingToken())
            .toList());
  }

  Status status(OutboxRecord r) {
    return store.find(r.commandId()).orElseThrow().status();
  }

  int posts(OutboxRecord r) {
    AtomicInteger n = postsPerKey.get(r.idempotencyKey().value());
    return n == null ? 0 : n.get();
  }

  @Override
  public void close() {
    server.close();
    serverDb.close();
    clientDb.close();
  }
}
