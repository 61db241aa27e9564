package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An entity's next command is marked sending while the one before it is in flight and leaves the
 * moment that one ends, its end recorded meanwhile: one commit per command no longer sits between
 * two requests of an entity. Order holds all the same: a command is never sent before the one
 * before it ended, and a response is never applied before the one before it.
 */
class EntityPipeliningTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path dir;
  private H2Database db;
  private H2OutboxStore store;
  private final ManualClock clock = ManualClock.startingAtEpoch2026();
  /** Each request's command, in the order the receiver got them. */
  private final List<CommandId> received = new CopyOnWriteArrayList<>();
  private List<OutboxRecord> commands;

  @BeforeEach
  void open() throws Exception {
    db = H2Database.open(dir.resolve("app"));
    store = H2OutboxStore.create(db);
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE applied (n INT AUTO_INCREMENT PRIMARY KEY, command_id UUID)");
    }
    Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
    commands = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      commands.add(outbox.accept(OutboxCommand.of("note.put", "note-1", Map.of("n", i))));
    }
  }

  @AfterEach
  void close() {
    db.close();
  }

  @Test
  void theNextCommandLeavesWhileTheAckBeforeItIsApplied() throws Exception {
    CountDownLatch secondSent = new CountDownLatch(1);
    Transport transport = acking(secondSent);
    // The first command's applier holds its commit until the second command's request arrives:
    // with a commit between the two requests it would wait in vain and throw.
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      if (command.commandId().equals(id(0)) && !secondSent.await(WAIT.toSeconds(),
          TimeUnit.SECONDS)) {
        throw new IllegalStateException("the next command did not leave during the apply");
      }
      applied(tx, command);
    };
    try (Replayer<Connection> replayer = replayer(transport, applier)) {
      PassSummary pass = replayer.runPass();
      assertThat(pass.acked()).isEqualTo(3);
    }
    assertThat(received).containsExactly(id(0), id(1), id(2));
    assertThat(appliedOrder()).containsExactly(id(0), id(1), id(2));
    assertThat(store.auditTrail(id(1))).extracting(OutboxStore.AuditEntry::reason)
        .containsExactly(Reason.CLAIMED, Reason.SENDING, Reason.ACKED);
  }

  @Test
  void anAckIsNotAppliedBeforeTheCommandBeforeItEnded() throws Exception {
    CountDownLatch secondSent = new CountDownLatch(1);
    Transport transport = acking(secondSent);
    // In the first pass the first command's applier fails, after the second command has left.
    AtomicBoolean refuse = new AtomicBoolean(true);
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      if (command.commandId().equals(id(0)) && refuse.get()) {
        assertThat(secondSent.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        throw new IllegalStateException("local state refuses this answer for now");
      }
      applied(tx, command);
    };
    try (Replayer<Connection> replayer = replayer(transport, applier)) {
      replayer.runPass();
      assertThat(status(0)).isEqualTo(Status.UNKNOWN);
      assertThat(store.find(id(0)).orElseThrow().lastError().code()).isEqualTo("apply_failed");
      assertThat(status(1)).as("acked by the receiver, not applied ahead of command 0")
          .isEqualTo(Status.UNKNOWN);
      assertThat(store.find(id(1)).orElseThrow().lastError().code())
          .isEqualTo(Reason.EARLIER_COMMAND_UNSETTLED.wireName());
      assertThat(appliedOrder()).as("nothing applied while command 0 is open").isEmpty();
      refuse.set(false);
      for (int pass = 0; pass < 20 && openRows() > 0; pass++) {
        clock.advance(Duration.ofMinutes(6));
        replayer.runPass();
      }
    }
    assertThat(openRows()).isZero();
    assertThat(appliedOrder()).as("each response applied once, in accept order")
        .containsExactly(id(0), id(1), id(2));
    assertThat(firstSends()).as("first requests in accept order").containsExactly(id(0), id(1),
        id(2));
  }

  @Test
  void theNextCommandIsGivenBackUnsentWhenTheOneBeforeItDoesNotEnd() throws Exception {
    Transport transport = receiver(command -> command.commandId().equals(id(0))
        ? TransportResult.of(TransportResult.Kind.RETRYABLE, null, "http_503", "busy")
        : ack());
    try (Replayer<Connection> replayer = replayer(transport, (tx, command, response) -> { })) {
      replayer.runPass();
    }
    assertThat(received).containsExactly(id(0));
    assertThat(status(0)).isEqualTo(Status.RETRYABLE_FAILED);
    OutboxRecord next = store.find(id(1)).orElseThrow();
    assertThat(next.status()).isEqualTo(Status.RETRYABLE_FAILED);
    assertThat(next.attempt()).as("never attempted").isZero();
    assertThat(next.nextAttemptAt()).as("due at once").isEqualTo(clock.instant());
    assertThat(store.auditTrail(id(1))).extracting(OutboxStore.AuditEntry::reason)
        .as("marked sending behind command 0, then given back")
        .containsExactly(Reason.CLAIMED, Reason.SENDING, Reason.NOT_SENT_EARLIER_COMMAND_OPEN);
    assertThat(status(2)).isEqualTo(Status.QUEUED);
  }

  @Test
  void theStoreTakesOnlyTheNeverAttemptedDueNextCommandOfARowStillSending() {
    Duration lease = Duration.ofMinutes(1);
    Instant now = clock.instant();
    OutboxRecord claimed = store.claim("me", lease, 10, now).get(0);
    assertThat(claimed.commandId()).isEqualTo(id(0));
    assertThat(next(claimed, 0, now)).as("not sending yet").isEmpty();
    OutboxRecord sending = store.markSending(List.of(claimed), now.plus(lease), now).get(0);
    OutboxRecord stale = new OutboxRecord(sending.commandId(), sending.idempotencyKey(),
        sending.operation(), sending.entityKey(), sending.payload(), sending.status(),
        sending.attempt(), sending.nextAttemptAt(), sending.claimOwner(), sending.claimedFrom(),
        sending.fencingToken() - 1, sending.leaseExpiresAt(), sending.sessionVersion(), null, null,
        sending.createdAt(), sending.updatedAt(), sending.schemaVersion(),
        sending.acceptSequence(), sending.firstSentAt());
    assertThat(next(stale, 0, now)).as("another token: the lease was lost").isEmpty();
    assertThat(next(sending, 1, now)).as("accepted under an older session").isEmpty();
    assertThat(next(sending, 0, now.minusMillis(1))).as("not due yet").isEmpty();
    assertThatThrownBy(() -> store.inTransaction(tx -> {
      assertThat(store.claimNextOfEntity(tx, "me", lease, sending, 0, now)).isPresent();
      throw new IllegalStateException("rolled back");
    })).hasMessage("rolled back");
    assertThat(status(1)).as("a rolled-back claim leaves nothing").isEqualTo(Status.QUEUED);

    OutboxRecord taken = next(sending, 0, now).orElseThrow();
    assertThat(taken.commandId()).isEqualTo(id(1));
    assertThat(taken.status()).isEqualTo(Status.CLAIMED);
    assertThat(taken.claimedFrom()).isEqualTo(Status.QUEUED);
    assertThat(taken.fencingToken()).isGreaterThan(sending.fencingToken());
    assertThat(status(1)).isEqualTo(Status.CLAIMED);
    assertThat(status(2)).as("only the next one").isEqualTo(Status.QUEUED);
    assertThat(store.auditTrail(id(1))).extracting(OutboxStore.AuditEntry::reason)
        .containsExactly(Reason.CLAIMED);
    assertThat(next(sending, 0, now)).as("the next one is held already, not queued").isEmpty();
  }

  private Optional<OutboxRecord> next(OutboxRecord sending, long sessionVersion, Instant now) {
    return store.inTransaction(tx -> store.claimNextOfEntity(tx, "me", Duration.ofMinutes(1),
        sending, sessionVersion, now));
  }

  private Replayer<Connection> replayer(Transport transport, ResponseApplier<Connection> applier) {
    return Replayer.builder(store, transport).clock(clock).concurrency(1).responseApplier(applier)
        .build();
  }

  private Transport receiver(Function<OutboxRecord, TransportResult> answer) {
    return new Transport() {
      @Override
      public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
        received.add(command.commandId());
        return answer.apply(command);
      }

      @Override
      public Optional<Reconciliation> reconcile(OutboxRecord command,
          SessionRuntime.Snapshot session) {
        return Optional.empty();
      }
    };
  }

  /** Acks every request; counts {@code secondSent} down when the second command's arrives. */
  private Transport acking(CountDownLatch secondSent) {
    return receiver(command -> {
      if (command.commandId().equals(id(1))) {
        secondSent.countDown();
      }
      return ack();
    });
  }

  private static TransportResult ack() {
    return TransportResult.of(TransportResult.Kind.ACKED, new StoredResponse(200, new byte[0]),
        "200", "ok");
  }

  private CommandId id(int n) {
    return commands.get(n).commandId();
  }

  private Status status(int n) {
    return store.find(id(n)).orElseThrow().status();
  }

  private long openRows() {
    return Status.countOpen(store.countByStatus());
  }

  /** Each command once, where the receiver first got it. */
  private List<CommandId> firstSends() {
    return received.stream().distinct().toList();
  }

  private static void applied(Connection tx, OutboxRecord command) throws Exception {
    try (var ps = tx.prepareStatement("INSERT INTO applied (command_id) VALUES (?)")) {
      ps.setObject(1, command.commandId().value());
      ps.executeUpdate();
    }
  }

  /** The committed applies, in the order they committed. */
  private List<CommandId> appliedOrder() throws Exception {
    List<CommandId> order = new ArrayList<>();
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT command_id FROM applied ORDER BY n")) {
      while (rs.next()) {
        order.add(new CommandId(rs.getObject(1, java.util.UUID.class)));
      }
    }
    return order;
  }
}
