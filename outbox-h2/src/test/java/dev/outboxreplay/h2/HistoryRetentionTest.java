package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.IdempotencyConflictException;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ReplayerBuilder;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.testkit.AckingTransport;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * History retention: ended commands become tombstones that still deduplicate, and tombstones are
 * deleted with their audit once the receiver has forgotten their keys. Open commands are never
 * touched.
 */
class HistoryRetentionTest {
  private static final Duration LEASE = Duration.ofMinutes(1);
  @TempDir Path dir;
  final ManualClock clock = ManualClock.startingAtEpoch2026();
  H2Database db;
  H2OutboxStore store;
  Outbox<Connection> outbox;

  @BeforeEach
  void open() {
    db = H2Database.open(dir.resolve("outbox"));
    store = H2OutboxStore.create(db);
    outbox = Outbox.builder(store).clock(clock).build();
  }

  @AfterEach
  void close() {
    db.close();
  }

  @Test
  void anEndedCommandBecomesATombstoneThatStillDeduplicatesAndCannotBeRequeued()
      throws Exception {
    OutboxRecord acked = end(command("a", "buy milk"), Outcome.acked(
        new StoredResponse(201, "{\"applied\":true}".getBytes(StandardCharsets.UTF_8))));
    OutboxRecord rejected = end(command("b", "sell milk"), Outcome.rejected(
        new dev.outboxreplay.ErrorInfo("http_422", "no milk on 2026-01-01", clock.instant()),
        new StoredResponse(422, "{\"error\":\"no milk\"}".getBytes(StandardCharsets.UTF_8))));
    OutboxRecord open = outbox.accept(command("c", "open"));
    clock.advance(Duration.ofHours(2));
    OutboxRecord endedLater = end(command("d", "later"), Outcome.acked(null));

    int changed = store.tombstoneEnded(clock.instant().minus(Duration.ofHours(1)),
        clock.instant());

    assertThat(changed).isEqualTo(2);
    OutboxRecord tomb = store.find(acked.commandId()).orElseThrow();
    assertThat(tomb.payload().retained()).isFalse();
    assertThat(tomb.payload().sha256Hex()).isEqualTo(acked.payload().sha256Hex());
    assertThatThrownBy(() -> tomb.payload().json()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("dropped by the history retention");
    assertThat(tomb.status()).isEqualTo(Status.ACKED);
    assertThat(tomb.idempotencyKey()).isEqualTo(acked.idempotencyKey());
    assertThat(tomb.response().status()).isEqualTo(201);
    assertThat(tomb.response().body()).isEmpty();
    OutboxRecord rejectedTomb = store.find(rejected.commandId()).orElseThrow();
    assertThat(rejectedTomb.lastError().code()).isEqualTo("http_422");
    assertThat(rejectedTomb.lastError().message()).doesNotContain("milk");
    assertThat(storedBytes(acked)).as("the payload bytes are gone from the row").isZero();

    assertThat(store.find(open.commandId()).orElseThrow().payload().json())
        .contains("open");
    assertThat(store.find(endedLater.commandId()).orElseThrow().payload().retained())
        .as("ended after the cutoff").isTrue();

    // the same key and content: the tombstone, no new command; other content: refused
    OutboxRecord again = outbox.accept(command("a", "buy milk")
        .withIdempotencyKey(acked.idempotencyKey()));
    assertThat(again.commandId()).isEqualTo(acked.commandId());
    assertThatThrownBy(() -> outbox.accept(command("a", "buy bread")
        .withIdempotencyKey(acked.idempotencyKey())))
        .isInstanceOf(IdempotencyConflictException.class);
    assertThatThrownBy(() -> store.requeue(rejected.commandId(), clock.instant()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("tombstone");
    assertThat(store.tombstoneEnded(clock.instant().plusMillis(1), clock.instant()))
        .as("only the later one is left to tombstone").isEqualTo(1);
  }

  @Test
  void tombstonesAreDeletedWithTheirAuditOnlyPastTheirAge() throws Exception {
    OutboxRecord old = end(command("a", "old"), Outcome.acked(null));
    OutboxRecord notTombstone = end(command("b", "kept"), Outcome.acked(null));
    OutboxRecord open = outbox.accept(command("c", "open"));
    store.tombstoneEnded(clock.instant().plusMillis(1), clock.instant());
    // b is made whole again, as if it had ended after the tombstone pass
    try (Connection c = db.dataSource().getConnection()) {
      c.createStatement().executeUpdate("UPDATE outbox_command SET tombstoned_at = NULL, "
          + "payload = X'7b7d', payload_hash = HASH('SHA-256', X'7b7d') WHERE command_id = '"
          + notTombstone.commandId() + "'");
    }
    assertThat(auditRows(old)).isPositive();
    clock.advance(Duration.ofDays(9));

    assertThat(store.deleteTombstones(clock.instant().minus(Duration.ofDays(10)))).isZero();
    assertThat(store.deleteTombstones(clock.instant().minus(Duration.ofDays(8)))).isEqualTo(1);

    assertThat(store.find(old.commandId())).isEmpty();
    assertThat(auditRows(old)).isZero();
    assertThat(store.find(notTombstone.commandId())).as("not a tombstone: kept").isPresent();
    assertThat(store.find(open.commandId())).isPresent();
    assertThat(store.countByStatus()).containsEntry(Status.ACKED, 1L)
        .containsEntry(Status.QUEUED, 1L);
    // past its deletion, the key is free: an accept with it is a new command
    OutboxRecord anew = outbox.accept(command("a", "old").withIdempotencyKey(old.idempotencyKey()));
    assertThat(anew.commandId()).isNotEqualTo(old.commandId());
    assertThat(anew.status()).isEqualTo(Status.QUEUED);
  }

  @Test
  void retentionWorksInBatchesOverManyRows() {
    int n = 1_234;
    List<OutboxCommand> commands = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      commands.add(OutboxCommand.of("note.put", "e-" + i, Map.of("i", i)));
    }
    outbox.acceptAll(commands);
    List<OutboxRecord> held;
    while (!(held = store.claim("r", LEASE, 500, clock.instant())).isEmpty()) {
      for (OutboxRecord r : held) {
        store.complete(r.commandId(), r.fencingToken(), Status.CLAIMED, Outcome.acked(null),
            clock.instant());
      }
    }
    clock.advance(Duration.ofDays(1));
    assertThat(store.tombstoneEnded(clock.instant(), clock.instant())).isEqualTo(n);
    assertThat(store.deleteTombstones(clock.instant())).isEqualTo(n);
    assertThat(store.countByStatus().values()).allMatch(count -> count == 0);
  }

  @Test
  void theReplayerAppliesTheRetentionAtMostOnceAnHour() {
    OutboxRecord first = outbox.accept(command("a", "first"));
    try (Replayer<Connection> replayer = Replayer.builder(store, AckingTransport.acking())
        .clock(clock).retryPolicy(RetryPolicy.builder().random(new Random(7)).build())
        .tombstoneAfter(Duration.ofDays(1)).build()) {
      replayer.runPass();
      assertThat(store.find(first.commandId()).orElseThrow().status()).isEqualTo(Status.ACKED);
      clock.advance(Duration.ofDays(1).plusHours(1));
      replayer.runPass();
      assertThat(store.find(first.commandId()).orElseThrow().payload().retained()).isFalse();

      OutboxRecord second = outbox.accept(command("b", "second"));
      replayer.runPass();   // acked now; the upkeep ran less than an hour ago
      clock.advance(Duration.ofDays(1).plusMinutes(30));
      replayer.runPass();
      assertThat(store.find(second.commandId()).orElseThrow().payload().retained()).isFalse();

      // default deletion age: key retention (7 days) plus 1 day after the command ended
      clock.advance(Duration.ofDays(6).plusHours(12));
      replayer.runPass();
      assertThat(store.find(first.commandId())).as("ended 8 days ago").isEmpty();
      assertThat(store.find(second.commandId())).as("ended 7.5 days ago").isPresent();
    }
  }

  @Test
  void theReplayerRefusesToDeleteTombstonesBeforeTheKeyRetention() {
    ReplayerBuilder<Connection> builder = Replayer.builder(store, AckingTransport.acking())
        .retryPolicy(RetryPolicy.builder().keyRetention(Duration.ofDays(7)).build())
        .deleteTombstonesAfter(Duration.ofDays(6));
    assertThatThrownBy(builder::build).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key retention");
  }

  private OutboxCommand command(String entity, String text) {
    return OutboxCommand.of("note.put", entity, Map.of("text", text));
  }

  /** Accepts {@code command}, claims it and ends it with {@code outcome}. */
  private OutboxRecord end(OutboxCommand command, Outcome outcome) {
    OutboxRecord accepted = outbox.accept(command);
    OutboxRecord held = store.claim("r", LEASE, 10, clock.instant()).stream()
        .filter(r -> r.commandId().equals(accepted.commandId())).findFirst().orElseThrow();
    store.complete(held.commandId(), held.fencingToken(), Status.CLAIMED, outcome,
        clock.instant());
    return accepted;
  }

  private long storedBytes(OutboxRecord r) throws Exception {
    return single("SELECT OCTET_LENGTH(payload) FROM outbox_command WHERE command_id = '"
        + r.commandId() + "'");
  }

  private long auditRows(OutboxRecord r) throws Exception {
    return single("SELECT COUNT(*) FROM outbox_audit WHERE command_id = '" + r.commandId() + "'");
  }

  private long single(String sql) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
