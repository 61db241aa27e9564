package dev.outboxreplay.h2;

import static dev.outboxreplay.h2.RatchetStandIn.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxConsumerException;
import dev.outboxreplay.InboxDiagnostic;
import dev.outboxreplay.InboxEntry;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.ReceiveResult.Outcome;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The seed's crash windows and races, each able to fail. */
class InboxTest {
  /** Thrown by the failure injector: stands for the process dying at that point. */
  static final class SimulatedCrash extends Error {
    private static final long serialVersionUID = 1L;

    SimulatedCrash(FailurePoint point) {
      super("simulated crash at " + point.label());
    }
  }

  @TempDir Path dir;
  ManualClock clock = ManualClock.startingAtEpoch2026();
  H2Database db;
  H2Database projectionDb;
  RatchetStandIn app = new RatchetStandIn();

  @BeforeEach
  void open() throws Exception {
    db = H2Database.open(dir.resolve("crypto"));
    projectionDb = H2Database.open(dir.resolve("history"));
    RatchetStandIn.createTables(db.dataSource(), projectionDb.dataSource());
  }

  @AfterEach
  void close() {
    db.close();
    projectionDb.close();
  }

  private Inbox<Connection> inbox(FailureInjector failures) {
    return Inbox.builder(H2InboxStore.create(db), app.consumer(),
        app.projector(projectionDb.dataSource())).clock(clock).failureInjector(failures).build();
  }

  private Inbox<Connection> inbox() {
    return inbox(FailureInjector.NONE);
  }

  private static FailureInjector crashAt(FailurePoint target) {
    return point -> {
      if (point == target) {
        throw new SimulatedCrash(point);
      }
    };
  }

  private static byte[] ok(String text) {
    return ("ok:" + text).getBytes(StandardCharsets.UTF_8);
  }

  private long ratchetSteps() throws Exception {
    return count(db.dataSource(), "SELECT COALESCE(MAX(steps), 0) FROM ratchet");
  }

  private long consumes() throws Exception {
    return count(db.dataSource(), "SELECT COUNT(*) FROM consume_log");
  }

  private long projectedMessages() throws Exception {
    return count(projectionDb.dataSource(), "SELECT COUNT(*) FROM message");
  }

  @Test
  void firstDeliveryConsumesAndProjectsAndRedeliveriesDoNotConsume() throws Exception {
    Inbox<Connection> inbox = inbox();
    assertThat(inbox.receive("profile", "m1", ok("hello")))
        .isEqualTo(new ReceiveResult(Outcome.CONSUMED, true));
    for (int i = 0; i < 3; i++) {
      assertThat(inbox.receive("profile", "m1", ok("hello")))
          .isEqualTo(new ReceiveResult(Outcome.DUPLICATE, true));
    }
    assertThat(app.consumerCalls).hasValue(1);
    assertThat(ratchetSteps()).isEqualTo(1);
    assertThat(projectedMessages()).isEqualTo(1);
    InboxEntry tombstone = inbox.store().find("profile", "m1").orElseThrow();
    assertThat(tombstone.state()).isEqualTo(InboxEntry.State.PROJECTED);
    assertThat(tombstone.stagedResult()).as("staged plaintext pruned").isNull();
    assertThat(inbox.receive("other-profile", "m1", ok("hi")).outcome())
        .as("the same id in another scope is another message").isEqualTo(Outcome.CONSUMED);
  }

  @Test
  void aRedeliveryWithOtherBytesIsFlaggedNeverConsumedAndListedWithoutItsId() throws Exception {
    Inbox<Connection> inbox = inbox();
    assertThat(inbox.receive("profile", "secret-message-id", ok("hello")).outcome())
        .isEqualTo(Outcome.CONSUMED);
    assertThat(inbox.mismatches()).isEmpty();
    clock.advance(Duration.ofMinutes(1));
    assertThat(inbox.receive("profile", "secret-message-id", ok("tampered")))
        .isEqualTo(new ReceiveResult(Outcome.DUPLICATE_MISMATCH, true));
    clock.advance(Duration.ofMinutes(1));
    assertThat(inbox.receive("profile", "secret-message-id", ok("tampered again")).outcome())
        .isEqualTo(Outcome.DUPLICATE_MISMATCH);
    assertThat(inbox.receive("profile", "secret-message-id", ok("hello")).outcome())
        .as("the consumed bytes again: a plain duplicate").isEqualTo(Outcome.DUPLICATE);
    assertThat(app.consumerCalls).as("the consumer never ran for the other bytes").hasValue(1);
    assertThat(ratchetSteps()).isEqualTo(1);
    assertThat(projectedMessages()).isEqualTo(1);

    List<InboxDiagnostic> flagged = inbox.mismatches();
    assertThat(flagged).singleElement().satisfies(d -> {
      assertThat(d.scope()).isEqualTo("profile");
      assertThat(d.messageIdHash()).hasSize(16).doesNotContain("secret");
      assertThat(d.at()).as("the latest mismatched delivery").isEqualTo(clock.instant());
      assertThat(d.reason()).contains("2 time(s)");
    });
    assertThat(flagged.toString()).doesNotContain("secret-message-id").doesNotContain("tampered");
    Inbox<Connection> reopened = inbox();
    assertThat(reopened.mismatches()).as("durable").hasSize(1);
  }

  @Test
  void crashAfterConsumeCommitBeforeProjectionIsProjectedOnReopenWithoutConsumingAgain()
      throws Exception {
    Inbox<Connection> crashing =
        inbox(crashAt(FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION));
    assertThatThrownBy(() -> crashing.receive("profile", "m1", ok("hello")))
        .isInstanceOf(SimulatedCrash.class);
    assertThat(projectedMessages()).isZero();
    assertThat(crashing.store().find("profile", "m1").orElseThrow().state())
        .isEqualTo(InboxEntry.State.STAGED);

    Inbox<Connection> reopened = inbox();
    assertThat(projectedMessages()).as("projected by recovery at open").isEqualTo(1);
    assertThat(reopened.receive("profile", "m1", ok("hello")).outcome())
        .isEqualTo(Outcome.DUPLICATE);
    assertThat(app.consumerCalls).hasValue(1);
    assertThat(ratchetSteps()).isEqualTo(1);
    assertThat(consumes()).isEqualTo(1);
  }

  @Test
  void projectionCommittedButMarkNotWrittenIsReplayedIdempotentlyAndTombstoned()
      throws Exception {
    Inbox<Connection> crashing = inbox(crashAt(FailurePoint.AFTER_PROJECTION_BEFORE_MARK));
    assertThatThrownBy(() -> crashing.receive("profile", "m1", ok("hello")))
        .isInstanceOf(SimulatedCrash.class);
    assertThat(projectedMessages()).isEqualTo(1);
    assertThat(crashing.store().find("profile", "m1").orElseThrow().state())
        .isEqualTo(InboxEntry.State.STAGED);

    Inbox<Connection> reopened = inbox();
    assertThat(app.projectorCalls).as("projection replayed once more").hasValue(2);
    assertThat(projectedMessages()).as("no duplicate message row").isEqualTo(1);
    InboxEntry entry = reopened.store().find("profile", "m1").orElseThrow();
    assertThat(entry.state()).isEqualTo(InboxEntry.State.PROJECTED);
    assertThat(entry.stagedResult()).isNull();
    assertThat(app.consumerCalls).hasValue(1);
  }

  @Test
  void anotherReceiverProjectingInTheWindowAfterCommitIsNotMistakenForAnIntegrityFailure()
      throws Exception {
    Inbox<Connection> other = inbox();
    ReceiveResult[] seenByOther = new ReceiveResult[1];
    Inbox<Connection> first = inbox(point -> {
      if (point == FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION) {
        seenByOther[0] = other.receive("profile", "m1", ok("hello"));
      }
    });
    assertThat(first.receive("profile", "m1", ok("hello")))
        .isEqualTo(new ReceiveResult(Outcome.CONSUMED, true));
    assertThat(seenByOther[0]).isEqualTo(new ReceiveResult(Outcome.DUPLICATE, true));
    assertThat(first.integrityFailures()).isEmpty();
    assertThat(first.store().find("profile", "m1").orElseThrow().state())
        .isEqualTo(InboxEntry.State.PROJECTED);
    assertThat(projectedMessages()).isEqualTo(1);
    assertThat(app.consumerCalls).hasValue(1);
  }

  @Test
  void sameMessageTenTimesFromFourThreadsIsConsumedOnceAndProjectedOnce() throws Exception {
    Inbox<Connection> inbox = inbox();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<ReceiveResult>> results = new ArrayList<>();
    try {
      for (int i = 0; i < 10; i++) {
        results.add(pool.submit(() -> {
          start.await();
          return inbox.receive("profile", "m1", ok("hello"));
        }));
      }
      start.countDown();
      int consumed = 0;
      for (Future<ReceiveResult> f : results) {
        if (f.get(60, TimeUnit.SECONDS).outcome() == Outcome.CONSUMED) {
          consumed++;
        }
      }
      assertThat(consumed).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
    assertThat(app.consumerCalls).hasValue(1);
    assertThat(consumes()).isEqualTo(1);
    assertThat(ratchetSteps()).isEqualTo(1);
    assertThat(projectedMessages()).isEqualTo(1);
  }

  @Test
  void corruptCiphertextRollsBackAndTheNextValidMessageStillDecrypts() throws Exception {
    Inbox<Connection> inbox = inbox();
    assertThatThrownBy(() -> inbox.receive("profile", "m1", "garbage".getBytes()))
        .isInstanceOf(InboxConsumerException.class)
        .hasMessageContaining("does not authenticate")
        .hasMessageContaining("not marked processed");
    assertThat(inbox.store().find("profile", "m1")).isEmpty();
    assertThat(ratchetSteps()).isZero();
    assertThat(consumes()).isZero();

    assertThat(inbox.receive("profile", "m2", ok("next")).outcome()).isEqualTo(Outcome.CONSUMED);
    assertThat(inbox.receive("profile", "m1", ok("redelivered intact")).outcome())
        .as("a failed consume does not mark the message processed").isEqualTo(Outcome.CONSUMED);
    assertThat(ratchetSteps()).isEqualTo(2);
  }

  @Test
  void missingStagedPayloadIsAnIntegrityFailureNeverConsumedAgainAndVisibleWithoutPlaintext()
      throws Exception {
    Inbox<Connection> crashing =
        inbox(crashAt(FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION));
    assertThatThrownBy(() -> crashing.receive("profile", "secret-id-7", ok("top secret")))
        .isInstanceOf(SimulatedCrash.class);
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("UPDATE inbox_message SET staged_result = NULL");
    }

    Inbox<Connection> reopened = inbox();
    assertThat(reopened.store().find("profile", "secret-id-7").orElseThrow().state())
        .isEqualTo(InboxEntry.State.INTEGRITY_FAILURE);
    assertThat(reopened.receive("profile", "secret-id-7", ok("top secret")))
        .isEqualTo(new ReceiveResult(Outcome.INTEGRITY_FAILURE, false));
    assertThat(app.consumerCalls).hasValue(1);
    assertThat(projectedMessages()).isZero();
    assertThat(reopened.recoverPending()).isZero();

    List<InboxDiagnostic> diagnostics = reopened.integrityFailures();
    assertThat(diagnostics).hasSize(1);
    InboxDiagnostic d = diagnostics.get(0);
    assertThat(d.scope()).isEqualTo("profile");
    assertThat(d.messageIdHash()).hasSize(16).doesNotContain("secret");
    assertThat(d.toString()).doesNotContain("secret-id-7").doesNotContain("top secret");
  }

  @Test
  void failedProjectionLeavesTheMessageStagedUntilRecovery() throws Exception {
    Inbox<Connection> inbox = inbox();
    app.projectorFails = true;
    assertThat(inbox.receive("profile", "m1", ok("hello")))
        .isEqualTo(new ReceiveResult(Outcome.CONSUMED, false));
    assertThat(inbox.recoverPending()).isZero();
    app.projectorFails = false;
    assertThat(inbox.receive("profile", "m1", ok("hello")))
        .as("a redelivery finishes the projection").isEqualTo(
            new ReceiveResult(Outcome.DUPLICATE, true));
    assertThat(projectedMessages()).isEqualTo(1);
    assertThat(app.consumerCalls).hasValue(1);
  }

  @Test
  void badInputIsRefusedAndNothingIsWritten() throws Exception {
    Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db), app.consumer(),
        app.projector(projectionDb.dataSource())).maxMessageBytes(16).build();
    assertThatThrownBy(() -> inbox.receive(" ", "m1", ok("x")))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("scope is blank");
    assertThatThrownBy(() -> inbox.receive("p", null, ok("x"))).hasMessage("messageId is null");
    assertThatThrownBy(() -> inbox.receive("p", "x".repeat(201), ok("x")))
        .hasMessage("messageId is 201 characters, more than 200");
    assertThatThrownBy(() -> inbox.receive("p", "m1", new byte[17]))
        .hasMessage("message is 17 bytes, over the limit of 16");
    assertThatThrownBy(() -> inbox.receive("p", "m1", null)).hasMessage("message bytes are null");
    assertThat(count(db.dataSource(), "SELECT COUNT(*) FROM inbox_message")).isZero();
    assertThat(app.consumerCalls).hasValue(0);
  }

  @Test
  void tombstonesAreKeptUntilAnExplicitPruneOlderThanTheCutOff() throws Exception {
    Inbox<Connection> inbox = inbox();
    inbox.receive("profile", "old", ok("a"));
    clock.advance(Duration.ofDays(30));
    inbox.receive("profile", "new", ok("b"));
    assertThat(inbox.store().pruneTombstones(clock.instant().minus(Duration.ofDays(7))))
        .isEqualTo(1);
    assertThat(inbox.store().find("profile", "old")).isEmpty();
    assertThat(inbox.receive("profile", "new", ok("b")).outcome()).isEqualTo(Outcome.DUPLICATE);
  }
}
