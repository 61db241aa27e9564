package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.outboxreplay.CommandId;
import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Reason;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Model-based check of the H2 store: a fuzzer-chosen sequence of accepts, claims (several
 * owners), sends, outcomes, releases, lease recoveries and clock moves, with handles that may be
 * stale. After every step the store must agree with a plain in-memory model: who holds what, with
 * which token, and which rows a claim may hand out (due entity heads only, all of them up to the
 * limit).
 */
class OutboxStoreFuzzTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static H2Database db;
  private static H2OutboxStore store;

  @BeforeAll
  static void openOnce() throws Exception {
    Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "fuzz");
    db = H2Database.open(dir.resolve("fuzz"));
    store = H2OutboxStore.create(db);
  }

  @AfterAll
  static void close() {
    db.close();
  }

  /** What the model believes about one row. */
  static final class Row {
    final CommandId id;
    final String entity;
    final long seq;
    Status status = Status.QUEUED;
    Status claimedFrom;
    long token;
    Instant due;
    Instant leaseEnd;
    Instant endedAt;
    boolean tombstone;

    Row(OutboxRecord r) {
      id = r.commandId();
      entity = r.entityKey();
      seq = r.acceptSequence();
      due = r.nextAttemptAt();
    }
  }

  record Handle(CommandId id, long token) {}

  @FuzzTest(maxDuration = "120s")
  void storeAgreesWithTheModelUnderAnySequenceOfOperations(FuzzedDataProvider data)
      throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("DELETE FROM outbox_command");
    }
    ManualClock clock = ManualClock.startingAtEpoch2026();
    Outbox<Connection> outbox =
        Outbox.builder(store).clock(clock).random(new SplittableRandom(1)).build();
    Map<CommandId, Row> model = new LinkedHashMap<>();
    List<Handle> handles = new ArrayList<>();

    int steps = data.consumeInt(1, 80);
    for (int step = 0; step < steps && data.remainingBytes() > 0; step++) {
      Instant now = clock.instant();
      switch (data.consumeInt(0, 8)) {
        case 0 -> {
          OutboxRecord r = outbox.accept(OutboxCommand.of("op", "e" + data.consumeInt(0, 3),
              Map.of("step", step)));
          model.put(r.commandId(), new Row(r));
        }
        case 1 -> {
          int limit = data.consumeInt(1, 4);
          List<Row> eligible = eligible(model, now);
          List<OutboxRecord> claimed =
              store.claim("owner-" + data.consumeInt(0, 2), LEASE, limit, now);
          assertThat(claimed).hasSize(Math.min(limit, eligible.size()));
          for (OutboxRecord r : claimed) {
            Row row = model.get(r.commandId());
            assertThat(eligible).as("claimed a row that was not an eligible head").contains(row);
            assertThat(r.fencingToken()).isGreaterThan(row.token);
            row.claimedFrom = row.status;
            assertThat(r.claimedFrom()).isEqualTo(row.claimedFrom);
            row.status = Status.CLAIMED;
            row.token = r.fencingToken();
            row.leaseEnd = now.plus(LEASE);
            handles.add(new Handle(r.commandId(), r.fencingToken()));
          }
        }
        case 2 -> {
          if (handles.isEmpty()) {
            break;
          }
          Handle h = data.pickValue(handles);
          Row row = model.get(h.id());
          Instant leaseEnd = now.plus(LEASE);
          if (row.status == Status.CLAIMED && row.token == h.token()) {
            assertThat(store.markSending(h.id(), h.token(), leaseEnd, now).status())
                .isEqualTo(Status.SENDING);
            row.status = Status.SENDING;
            row.leaseEnd = leaseEnd;
          } else {
            assertThatThrownBy(() -> store.markSending(h.id(), h.token(), leaseEnd, now))
                .isInstanceOf(FencedOffException.class);
          }
        }
        case 3 -> {
          if (handles.isEmpty()) {
            break;
          }
          Handle h = data.pickValue(handles);
          Row row = model.get(h.id());
          Status expected = data.consumeBoolean() ? Status.CLAIMED : Status.SENDING;
          Outcome outcome = outcome(data, now);
          if (!StateMachine.isAllowed(expected, outcome.status())) {
            assertThatThrownBy(() -> store.complete(h.id(), h.token(), expected, outcome, now))
                .isInstanceOf(IllegalStateException.class);
          } else if (row.status == expected && row.token == h.token()) {
            store.complete(h.id(), h.token(), expected, outcome, now);
            row.status = outcome.status();
            row.endedAt = outcome.status().isTerminal() ? now : null;
            row.due = outcome.status().isTerminal() ? row.due : outcome.nextAttemptAt();
            row.claimedFrom = null;
            row.leaseEnd = null;
          } else {
            assertThatThrownBy(() -> store.complete(h.id(), h.token(), expected, outcome, now))
                .isInstanceOf(FencedOffException.class);
          }
        }
        case 4 -> {
          if (handles.isEmpty()) {
            break;
          }
          Handle h = data.pickValue(handles);
          Row row = model.get(h.id());
          Instant due = now.plusSeconds(data.consumeInt(0, 60));
          if (row.status == Status.CLAIMED && row.token == h.token()) {
            assertThat(store.release(h.id(), h.token(), due, now).status())
                .isEqualTo(row.claimedFrom);
            row.status = row.claimedFrom;
            row.claimedFrom = null;
            row.due = due;
            row.leaseEnd = null;
          } else {
            assertThatThrownBy(() -> store.release(h.id(), h.token(), due, now))
                .isInstanceOf(FencedOffException.class);
          }
        }
        case 5 -> assertThat(store.recoverExpiredLeases(now)).hasSize(recover(model, now));
        case 6 -> {
          Instant endedBefore = now.minusSeconds(data.consumeInt(0, 90));
          int expected = 0;
          for (Row row : model.values()) {
            if (row.endedAt != null && !row.tombstone && row.endedAt.isBefore(endedBefore)) {
              row.tombstone = true;
              expected++;
            }
          }
          assertThat(store.tombstoneEnded(endedBefore, now)).isEqualTo(expected);
        }
        case 7 -> {
          Instant endedBefore = now.minusSeconds(data.consumeInt(0, 90));
          List<CommandId> gone = model.values().stream()
              .filter(row -> row.tombstone && row.endedAt.isBefore(endedBefore))
              .map(row -> row.id).toList();
          assertThat(store.deleteTombstones(endedBefore)).isEqualTo(gone.size());
          for (CommandId id : gone) {
            model.remove(id);
            handles.removeIf(h -> h.id().equals(id));
            assertThat(store.find(id)).isEmpty();
            assertThat(store.auditTrail(id)).isEmpty();
          }
        }
        default -> clock.advance(Duration.ofSeconds(data.consumeInt(0, 45)));
      }
      checkAgreement(model);
    }
  }

  private static Outcome outcome(FuzzedDataProvider data, Instant now) {
    Instant next = now.plusSeconds(data.consumeInt(0, 60));
    ErrorInfo error = new ErrorInfo("fuzz", "", now);
    return switch (data.consumeInt(0, 5)) {
      case 0 -> Outcome.acked(null);
      case 1 -> Outcome.retryable(next, error);
      case 2 -> Outcome.unknown(next, error);
      case 3 -> Outcome.conflict(error, null);
      case 4 -> Outcome.rejected(error, null);
      default -> new Outcome(Status.QUEUED, next, null, null, false, Reason.RELEASED);
    };
  }

  private static int recover(Map<CommandId, Row> model, Instant now) {
    int recovered = 0;
    for (Row row : model.values()) {
      boolean held = row.status == Status.SENDING || row.status == Status.CLAIMED;
      if (held && !row.leaseEnd.isAfter(now)) {
        row.status = row.status == Status.SENDING ? Status.UNKNOWN : row.claimedFrom;
        row.due = now;
        row.leaseEnd = null;
        row.claimedFrom = null;
        recovered++;
      }
    }
    return recovered;
  }

  private static List<Row> eligible(Map<CommandId, Row> model, Instant now) {
    List<Row> result = new ArrayList<>();
    for (Row row : model.values()) {
      boolean waitingAndDue = (row.status == Status.QUEUED || row.status == Status.RETRYABLE_FAILED
          || row.status == Status.UNKNOWN) && !row.due.isAfter(now);
      boolean head = model.values().stream().noneMatch(other -> other.entity.equals(row.entity)
          && other.seq < row.seq && !other.status.isTerminal());
      if (waitingAndDue && head) {
        result.add(row);
      }
    }
    return result;
  }

  private static void checkAgreement(Map<CommandId, Row> model) {
    Map<Status, Long> expected = new EnumMap<>(Status.class);
    for (Status s : Status.values()) {
      expected.put(s, 0L);
    }
    Map<String, Integer> heldPerEntity = new LinkedHashMap<>();
    for (Row row : model.values()) {
      expected.merge(row.status, 1L, Long::sum);
      if (row.status == Status.CLAIMED || row.status == Status.SENDING) {
        heldPerEntity.merge(row.entity, 1, Integer::sum);
      }
      OutboxRecord stored = store.find(row.id).orElseThrow();
      assertThat(stored.status()).as("status of %s", row.id).isEqualTo(row.status);
      assertThat(stored.fencingToken()).isEqualTo(row.token);
      assertThat(stored.payload().retained()).as("payload of %s kept", row.id)
          .isEqualTo(!row.tombstone);
    }
    assertThat(store.countByStatus()).isEqualTo(expected);
    assertThat(heldPerEntity.values()).as("rows held per entity").allMatch(n -> n == 1);
  }
}
