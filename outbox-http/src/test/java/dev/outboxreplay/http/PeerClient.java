package dev.outboxreplay.http;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore.AuditEntry;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The replaying side of a test against a receiver nobody here wrote: a real H2 outbox file, a
 * manual clock, and the answers the response applier was given per command (an empty optional
 * for an ack without an answer).
 */
final class PeerClient implements AutoCloseable {
  final ManualClock clock = ManualClock.startingAtEpoch2026();
  final H2Database db;
  final H2OutboxStore store;
  final Outbox<Connection> outbox;
  final Map<String, Optional<StoredResponse>> applied = new ConcurrentHashMap<>();

  PeerClient(Path dir) {
    db = H2Database.open(dir.resolve("client"));
    store = H2OutboxStore.create(db);
    outbox = Outbox.builder(store).clock(clock).random(new SplittableRandom(3)).build();
  }

  OutboxRecord accept(String entity, int seq) {
    return outbox.accept(OutboxCommand.of("note.put", entity,
        Map.of("entity", entity, "seq", seq)));
  }

  /** The transport most tests use: no reconciliation, a short call timeout, this clock. */
  OkHttpTransport.Builder transport(LoopbackPeer peer) {
    return OkHttpTransport.builder(okhttp3.HttpUrl.get(peer.baseUrl())).clock(clock)
        .callTimeout(Duration.ofSeconds(10)).reconciliation(false);
  }

  /** Runs passes, a minute of clock apart, until no command is open or {@code passes} ran. */
  void replay(OkHttpTransport transport, int passes) {
    try (Replayer<Connection> replayer = Replayer.builder(store, transport).clock(clock)
        .concurrency(4).lease(Duration.ofSeconds(30)).holdInterval(Duration.ofSeconds(5))
        .retryPolicy(RetryPolicy.builder().random(new SplittableRandom(5))
            .maxInterval(Duration.ofSeconds(30)).build())
        .responseApplier((tx, command, response) ->
            applied.put(command.commandId().toString(), Optional.ofNullable(response)))
        .build()) {
      for (int i = 0; i < passes && Status.countOpen(store.countByStatus()) > 0; i++) {
        replayer.runPass();
        clock.advance(Duration.ofMinutes(1));
      }
    }
  }

  Status status(OutboxRecord r) {
    return store.find(r.commandId()).orElseThrow().status();
  }

  List<Reason> reasons(OutboxRecord r) {
    return store.auditTrail(r.commandId()).stream().map(AuditEntry::reason).toList();
  }

  @Override
  public void close() {
    db.close();
  }
}
