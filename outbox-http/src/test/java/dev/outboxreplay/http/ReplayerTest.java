package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.StaleSessionPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.server.FaultPlan;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import dev.outboxreplay.testkit.Seeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replay engine against the real reference server on loopback; time is a manual clock. */
class ReplayerTest {
  @TempDir Path dir;
  ReplayFixture f;

  @BeforeEach
  void open() throws Exception {
    f = new ReplayFixture(dir);
  }

  @AfterEach
  void close() {
    f.close();
  }

  @Test
  void responseLostAfterCommitBecomesUnknownThenIsReconciledAndAckedWithoutResending() {
    OutboxRecord cmd = f.accept("n1", 1);
    f.faults.set(request -> FaultPlan.Fault.dropResponseAfterCommit());
    try (Replayer<Connection> replayer = f.replayer()) {
      PassSummary first = replayer.runPass();
      assertThat(first.unknown()).isEqualTo(1);
      assertThat(f.status(cmd)).isEqualTo(Status.UNKNOWN);
      f.faults.set(FaultPlan.NONE);
      f.clock.advance(Duration.ofMinutes(2));
      PassSummary second = replayer.runPass();
      assertThat(second.reconciled()).isEqualTo(1);
      assertThat(second.acked()).isEqualTo(1);
    }
    assertThat(f.status(cmd)).isEqualTo(Status.ACKED);
    assertThat(f.posts(cmd)).as("requests the server received for the key").isEqualTo(1);
    assertThat(f.applied).hasValue(1);
    assertThat(f.store.auditTrail(cmd.commandId())).extracting(OutboxStore.AuditEntry::reason)
        .containsExactly(Reason.CLAIMED, Reason.SENDING, Reason.OUTCOME_UNKNOWN, Reason.CLAIMED,
            Reason.RECONCILED_COMMITTED);
    f.assertListenerSawWhatTheAuditRecorded(cmd);
  }

  @Test
  void withoutReconciliationAnUnknownOutcomeIsResentWithTheSameKey() throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    f.faults.set(request -> FaultPlan.Fault.dropResponseAfterCommit());
    OkHttpTransport plain = OkHttpTransport.builder(okhttp3.HttpUrl.get(f.server.baseUrl()))
        .reconciliation(false).clock(f.clock).build();
    try (Replayer<Connection> replayer = Replayer.builder(f.store, plain).clock(f.clock)
        .session(f.session::get).build()) {
      assertThat(replayer.runPass().unknown()).isEqualTo(1);
      f.faults.set(FaultPlan.NONE);
      f.clock.advance(Duration.ofMinutes(10));
      PassSummary resent = replayer.runPass();
      assertThat(resent.acked()).isEqualTo(1);
      assertThat(resent.reconciled()).isZero();
    }
    assertThat(f.posts(cmd)).as("resent once, same key").isEqualTo(2);
    assertThat(f.notes.effectCount("default", cmd.idempotencyKey().value())).isEqualTo(1);
    assertThat(f.store.find(cmd.commandId()).orElseThrow().response().status()).isEqualTo(201);
  }

  @Test
  void anAcceptWakesTheReplayerThroughTheOnAcceptedHook() {
    try (Replayer<Connection> replayer = f.replayer()) {
      dev.outboxreplay.Outbox<Connection> waking = dev.outboxreplay.Outbox.builder(f.store)
          .clock(f.clock).onAccepted(replayer::onAccepted).build();
      OutboxRecord cmd = waking.accept(dev.outboxreplay.OutboxCommand.of("note.put", "n9",
          java.util.Map.of("entity", "n9", "seq", 1)));
      Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> f.status(cmd) == Status.ACKED);
    }
  }

  @Test
  void a503WithRetryAfterIsRetriedNoEarlierThanTheServerAsked() throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    f.faults.set(request -> FaultPlan.Fault.fail(503, Duration.ofSeconds(120)));
    try (Replayer<Connection> replayer = f.replayer()) {
      assertThat(replayer.runPass().retried()).isEqualTo(1);
      OutboxRecord waiting = f.store.find(cmd.commandId()).orElseThrow();
      assertThat(waiting.status()).isEqualTo(Status.RETRYABLE_FAILED);
      assertThat(waiting.lastError().code()).isEqualTo("http_503");
      assertThat(waiting.nextAttemptAt()).isEqualTo(f.clock.instant().plusSeconds(120));
      f.faults.set(FaultPlan.NONE);
      f.clock.advance(Duration.ofSeconds(119));
      assertThat(replayer.runPass().claimed()).isZero();
      f.clock.advance(Duration.ofSeconds(1));
      assertThat(replayer.runPass().acked()).isEqualTo(1);
    }
    assertThat(f.posts(cmd)).isEqualTo(2);
  }

  @Test
  void keyReusedWithAnotherPayloadEndsAsConflictAndIsNotResent() throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> other = http.send(HttpRequest.newBuilder(
            URI.create(f.server.baseUrl() + "/note.put"))
        .header("Idempotency-Key", "\"" + cmd.idempotencyKey() + "\"")
        .POST(HttpRequest.BodyPublishers.ofString("{\"entity\":\"n1\",\"seq\":99}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(other.statusCode()).isEqualTo(201);
    try (Replayer<Connection> replayer = f.replayer()) {
      assertThat(replayer.runPass().conflicts()).isEqualTo(1);
      f.clock.advance(Duration.ofHours(1));
      assertThat(replayer.runPass().claimed()).isZero();
    }
    OutboxRecord ended = f.store.find(cmd.commandId()).orElseThrow();
    assertThat(ended.status()).isEqualTo(Status.CONFLICT);
    assertThat(ended.response().status()).isEqualTo(422);
    assertThat(f.posts(cmd)).isEqualTo(2);
    assertThat(f.applied).hasValue(0);
  }

  /** The server answers 401 until the returned action gives the session fresh credentials. */
  private Runnable answer401UntilCredentialsAreRefreshed() {
    AtomicBoolean tokenValid = new AtomicBoolean(false);
    f.faults.set(request -> tokenValid.get() ? FaultPlan.Fault.NONE
        : FaultPlan.Fault.fail(401, null));
    return () -> {
      tokenValid.set(true);
      f.session.set(new SessionRuntime.Snapshot("default", 0, false, "token-2"));
    };
  }

  @Test
  void a401PausesReplayWithoutCountingAnAttemptUntilCredentialsAreRefreshed() {
    OutboxRecord a = f.accept("n1", 1);
    OutboxRecord b = f.accept("n2", 1);
    Runnable refreshCredentials = answer401UntilCredentialsAreRefreshed();
    try (Replayer<Connection> replayer = f.replayer("r", x -> x.concurrency(1).batchSize(1))) {
      PassSummary refused = replayer.runPass();
      assertThat(refused.pausedReason()).isEqualTo(Reason.CREDENTIALS_REFUSED);
      assertThat(replayer.runPass().claimed()).as("paused: nothing claimed").isZero();
      assertThat(f.store.find(a.commandId()).orElseThrow().attempt()).isZero();
      refreshCredentials.run();
      PassSummary resumed = replayer.runPass();
      assertThat(resumed.acked()).isEqualTo(2);
    }
    assertThat(f.status(a)).isEqualTo(Status.ACKED);
    assertThat(f.status(b)).isEqualTo(Status.ACKED);
  }

  @Test
  void aRowMarkedSendingAheadIsNotSentOnceA401PausesReplayAndIsRecordedAsNotSent() {
    OutboxRecord a = f.accept("n1", 1);
    OutboxRecord b = f.accept("n2", 1);
    OutboxRecord c = f.accept("n3", 1);
    Runnable refreshCredentials = answer401UntilCredentialsAreRefreshed();
    // one sender: a is sent, b is marked sending ahead of it, c stays claimed
    try (Replayer<Connection> replayer = f.replayer("r", x -> x.concurrency(1).batchSize(10))) {
      assertThat(replayer.runPass().pausedReason()).isEqualTo(Reason.CREDENTIALS_REFUSED);
      assertThat(f.posts(a)).isEqualTo(1);
      assertThat(f.posts(b)).as("marked sending ahead, never sent after the 401").isZero();
      assertThat(f.posts(c)).isZero();
      OutboxRecord notSent = f.store.find(b.commandId()).orElseThrow();
      assertThat(notSent.status()).isEqualTo(Status.RETRYABLE_FAILED);
      assertThat(notSent.attempt()).isZero();
      assertThat(notSent.lastError().code()).isEqualTo("not_sent_replay_paused");
      assertThat(f.store.auditTrail(b.commandId())).extracting(e -> e.to() + ":" + e.reason())
          .containsExactly("claimed:claimed", "sending:sending",
              "retryable_failed:not_sent_replay_paused");
      assertThat(f.status(c)).isEqualTo(Status.QUEUED);
      refreshCredentials.run();
      assertThat(replayer.runPass().acked()).isEqualTo(3);
    }
    assertThat(List.of(f.posts(a), f.posts(b), f.posts(c))).containsExactly(2, 1, 1);
    assertThat(f.applied).hasValue(3);
  }

  @Test
  void aRowMarkedSendingAheadWhoseLeaseIsHalfSpentIsNotSentButClaimedAfresh() {
    OutboxRecord a = f.accept("n1", 1);
    OutboxRecord b = f.accept("n2", 1);
    // a's request takes 20 s of the 30 s lease that b was marked sending under, ahead of it
    f.faults.set(request -> request.idempotencyKey().equals(a.idempotencyKey().value())
        ? FaultPlan.Fault.beforeCommit(() -> f.clock.advance(Duration.ofSeconds(20)))
        : FaultPlan.Fault.NONE);
    try (Replayer<Connection> replayer = f.replayer("r", x -> x.concurrency(1).batchSize(10))) {
      assertThat(replayer.runPass().acked()).isEqualTo(2);
    }
    assertThat(f.store.auditTrail(b.commandId())).extracting(e -> e.to() + ":" + e.reason())
        .containsExactly("claimed:claimed", "sending:sending",
            "retryable_failed:not_sent_lease_half_spent", "claimed:claimed", "sending:sending",
            "acked:acked");
    assertThat(f.posts(b)).as("sent once, under its fresh claim").isEqualTo(1);
    assertThat(f.store.find(b.commandId()).orElseThrow().attempt()).isEqualTo(1);
  }

  @Test
  void revokedSessionStopsReplayAtOnce() {
    OutboxRecord cmd = f.accept("n1", 1);
    f.session.set(new SessionRuntime.Snapshot("default", 0, true, "token-1"));
    try (Replayer<Connection> replayer = f.replayer()) {
      PassSummary pass = replayer.runPass();
      assertThat(pass.pausedReason()).isEqualTo(Reason.SESSION_REVOKED);
      assertThat(pass.claimed()).isZero();
    }
    assertThat(f.status(cmd)).isEqualTo(Status.QUEUED);
    assertThat(f.posts(cmd)).isZero();
  }

  @Test
  void zombieReplayerWhoseLeaseExpiredMidRequestCannotMarkTheRowAndTheNewOwnersOutcomeStands()
      throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    f.faults.set(request -> FaultPlan.Fault.beforeCommit(() -> {
      inside.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    try (Replayer<Connection> zombie = f.replayer("zombie", b -> b);
        Replayer<Connection> successor = f.replayer("successor", b -> b)) {
      CompletableFuture<PassSummary> zombiePass = CompletableFuture.supplyAsync(zombie::runPass);
      assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
      f.faults.set(FaultPlan.NONE);
      f.clock.advance(Duration.ofSeconds(31));
      PassSummary takeover = successor.runPass();
      assertThat(takeover.claimed()).isEqualTo(1);
      assertThat(takeover.released()).as("server still processing: successor waits")
          .isEqualTo(1);
      release.countDown();
      PassSummary zombieResult = zombiePass.get(30, TimeUnit.SECONDS);
      assertThat(zombieResult.fencedOff()).isEqualTo(1);
      assertThat(zombieResult.acked()).isZero();
      f.clock.advance(Duration.ofSeconds(6));
      PassSummary settled = successor.runPass();
      assertThat(settled.reconciled()).isEqualTo(1);
    }
    OutboxRecord done = f.store.find(cmd.commandId()).orElseThrow();
    assertThat(done.status()).isEqualTo(Status.ACKED);
    List<OutboxStore.AuditEntry> trail = f.store.auditTrail(cmd.commandId());
    OutboxStore.AuditEntry ack = trail.get(trail.size() - 1);
    assertThat(ack.to()).isEqualTo(Status.ACKED);
    assertThat(ack.fencingToken()).isEqualTo(done.fencingToken());
    assertThat(trail).filteredOn(e -> e.to() == Status.CLAIMED)
        .extracting(OutboxStore.AuditEntry::fencingToken).doesNotHaveDuplicates();
    assertThat(f.applied).as("applier ran once, for the new owner only").hasValue(1);
    f.assertListenerSawWhatTheAuditRecorded(cmd); // the lease recovery included
    assertThat(appliedRows()).isEqualTo(1);
    assertThat(f.notes.effectCount("default", cmd.idempotencyKey().value())).isEqualTo(1);
  }

  @Test
  void aResponseThatArrivesAfterTheSessionChangedIsNotApplied() throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    try (Replayer<Connection> replayer = f.replayer("r",
        b -> b.staleSessionPolicy(StaleSessionPolicy.RESEND))) {
      f.faults.set(request -> {
        f.faults.set(FaultPlan.NONE); // only the first request changes the session
        return FaultPlan.Fault.beforeCommit(() -> f.session.set(
            new SessionRuntime.Snapshot("default", 1, false, "token-1")));
      });
      PassSummary pass = replayer.runPass();
      assertThat(pass.acked()).as("reconciled under the new session in the same pass")
          .isEqualTo(1);
    }
    assertThat(f.store.auditTrail(cmd.commandId())).extracting(e -> e.to() + ":" + e.reason())
        .as("the receiver has the effect: unknown, then reconciled, never resent as new")
        .containsExactly("claimed:claimed", "sending:sending",
            "unknown:stale_response", "claimed:claimed", "acked:reconciled_committed");
    assertThat(f.applied).as("only the answer obtained under the current session").hasValue(1);
    assertThat(appliedRows()).isEqualTo(1);
    assertThat(f.posts(cmd)).isEqualTo(1);
    assertThat(f.notes.effectCount("default", cmd.idempotencyKey().value())).isEqualTo(1);
  }

  private long appliedRows() throws Exception {
    try (Connection c = f.clientDb.dataSource().getConnection();
        var rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM applied_answer")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void answersRecordedTogetherFallBackToOneByOneWhenAnApplierThrows() throws Exception {
    int n = 4;
    List<OutboxRecord> cmds = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      cmds.add(f.accept("entity-" + i, 1));
    }
    AtomicInteger answered = new AtomicInteger();
    Transport counting = new Transport() {
      @Override
      public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
        TransportResult result = f.transport.send(command, session);
        answered.incrementAndGet();
        return result;
      }

      @Override
      public Optional<Reconciliation> reconcile(OutboxRecord command,
          SessionRuntime.Snapshot session) throws IOException {
        return f.transport.reconcile(command, session);
      }
    };
    // The first applier call waits until every answer has arrived, so the command of the second
    // call is always recorded in a group of two or more. That command's applier always throws.
    AtomicInteger calls = new AtomicInteger();
    AtomicReference<CommandId> bad = new AtomicReference<>();
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      if (calls.incrementAndGet() == 1) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answered.get() == n);
      } else {
        bad.compareAndSet(null, command.commandId());
      }
      if (command.commandId().equals(bad.get())) {
        throw new IllegalStateException("local state refuses this answer");
      }
      try (var ps = tx.prepareStatement("INSERT INTO applied_answer VALUES (?, ?)")) {
        ps.setObject(1, command.commandId().value());
        ps.setInt(2, response.status());
        ps.executeUpdate();
      }
    };
    try (Replayer<Connection> replayer = Replayer.builder(f.store, counting).clock(f.clock)
        .concurrency(n).responseApplier(applier).build()) {
      PassSummary pass = replayer.runPass();
      assertThat(pass.acked()).isEqualTo(n - 1);
      assertThat(pass.unknown()).as("the receiver committed it: fetched again later")
          .isEqualTo(1);
    }
    // One by one from the start would be exactly n calls; a group tried, rolled back and then
    // recorded one by one calls the appliers of its good commands twice.
    assertThat(calls.get()).as("the group was tried, rolled back, then recorded one by one")
        .isGreaterThan(n);
    assertThat(appliedRows()).as("nothing of the rolled-back group was kept").isEqualTo(n - 1);
    for (OutboxRecord cmd : cmds) {
      OutboxRecord now = f.store.find(cmd.commandId()).orElseThrow();
      if (cmd.commandId().equals(bad.get())) {
        assertThat(now.status()).isEqualTo(Status.UNKNOWN);
        assertThat(now.lastError().code()).isEqualTo("apply_failed");
      } else {
        assertThat(now.status()).isEqualTo(Status.ACKED);
      }
      assertThat(f.notes.effectCount("default", cmd.idempotencyKey().value())).isEqualTo(1);
    }
  }

  @Test
  void rowsToSendNextStillGoOutWhenTheTransactionTheyWereMarkedInRollsBack() throws Exception {
    // Two senders, four entities: the answer of one of the first two sends is recorded in the
    // same transaction that marks a waiting row sending. Its applier throws, so that transaction
    // rolls back, and the waiting rows must then be marked and sent on their own.
    List<OutboxRecord> cmds = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      cmds.add(f.accept("entity-" + i, 1));
    }
    CommandId bad = cmds.get(1).commandId();
    ResponseApplier<Connection> applier = (tx, command, response) -> {
      if (command.commandId().equals(bad)) {
        throw new IllegalStateException("local state refuses this answer");
      }
    };
    try (Replayer<Connection> replayer = Replayer.builder(f.store, f.transport).clock(f.clock)
        .concurrency(2).batchSize(4).responseApplier(applier).build()) {
      PassSummary pass = replayer.runPass();
      assertThat(pass.acked()).isEqualTo(3);
      assertThat(pass.unknown()).isEqualTo(1);
    }
    for (OutboxRecord cmd : cmds) {
      OutboxRecord now = f.store.find(cmd.commandId()).orElseThrow();
      assertThat(now.status()).isEqualTo(cmd.commandId().equals(bad)
          ? Status.UNKNOWN : Status.ACKED);
      assertThat(f.notes.effectCount("default", cmd.idempotencyKey().value())).isEqualTo(1);
      assertThat(f.store.auditTrail(cmd.commandId())).extracting(OutboxStore.AuditEntry::to)
          .as("marked sending once, by the commit that counted").containsOnlyOnce(Status.SENDING);
    }
  }

  @Test
  void commandsOfAnOlderSessionAreHeldByDefault() {
    OutboxRecord old = f.accept("n1", 1);
    f.session.set(new SessionRuntime.Snapshot("default", 1, false, "token-9"));
    OutboxRecord current = f.accept("n2", 1);
    try (Replayer<Connection> replayer = f.replayer()) {
      PassSummary pass = replayer.runPass();
      assertThat(pass.acked()).isEqualTo(1);
      assertThat(pass.released()).isEqualTo(1);
    }
    assertThat(f.status(old)).isEqualTo(Status.QUEUED);
    assertThat(f.posts(old)).isZero();
    assertThat(f.status(current)).isEqualTo(Status.ACKED);
  }

  @Test
  void theRejectPolicyEndsCommandsOfAnOlderSessionWithAReason() {
    OutboxRecord old = f.accept("n1", 1);
    f.session.set(new SessionRuntime.Snapshot("default", 1, false, "token-9"));
    try (Replayer<Connection> replayer = f.replayer("r",
        b -> b.staleSessionPolicy(StaleSessionPolicy.REJECT))) {
      assertThat(replayer.runPass().rejected()).isEqualTo(1);
    }
    OutboxRecord ended = f.store.find(old.commandId()).orElseThrow();
    assertThat(ended.status()).isEqualTo(Status.REJECTED);
    assertThat(ended.lastError().code()).isEqualTo("stale_session");
    assertThat(f.posts(old)).isZero();
  }

  @Test
  void aPoisonCommandEndsRejectedWithAnEventAndDoesNotBlockOtherEntities() {
    OutboxRecord poison = f.accept("bad", 1);
    OutboxRecord fine = f.accept("good", 1);
    f.faults.set(request -> request.idempotencyKey().contains(":bad:")
        ? FaultPlan.Fault.fail(500, null) : FaultPlan.Fault.NONE);
    try (Replayer<Connection> replayer = f.replayer("r", b -> b.retryPolicy(
        dev.outboxreplay.RetryPolicy.builder().random(new SplittableRandom(3)).maxAttempts(3)
            .build()))) {
      for (int i = 0; i < 5; i++) {
        replayer.runPass();
        f.clock.advance(Duration.ofMinutes(10));
      }
    }
    OutboxRecord ended = f.store.find(poison.commandId()).orElseThrow();
    assertThat(ended.status()).isEqualTo(Status.REJECTED);
    assertThat(ended.lastError().code()).isEqualTo("poison_max_attempts");
    assertThat(f.posts(poison)).isEqualTo(3);
    assertThat(f.poisoned).containsExactly("bad:poison_max_attempts");
    assertThat(f.status(fine)).isEqualTo(Status.ACKED);
  }

  @Test
  void thousandCommandsOverTwentyEntitiesWithOneInFiveResponsesLostAreAppliedExactlyOnceInOrder()
      throws Exception {
    long seed = Seeds.seed("replay.seed", "thousand-commands");
    SplittableRandom random = new SplittableRandom(seed);
    List<OutboxRecord> accepted = new ArrayList<>();
    for (int seq = 0; seq < 50; seq++) {
      for (int e = 0; e < 20; e++) {
        accepted.add(f.accept("entity-" + e, seq));
      }
    }
    f.faults.set(request -> {
      synchronized (random) {
        return random.nextInt(5) == 0 ? FaultPlan.Fault.dropResponseAfterCommit()
            : FaultPlan.Fault.NONE;
      }
    });
    try (Replayer<Connection> replayer = f.replayer("r", b -> b.concurrency(8).batchSize(20))) {
      for (int pass = 0; pass < 200
          && f.store.countByStatus().get(Status.ACKED) < accepted.size(); pass++) {
        replayer.runPass();
        f.clock.advance(Duration.ofMinutes(2));
      }
    }
    assertThat(f.store.countByStatus().get(Status.ACKED)).as("seed %d", seed).isEqualTo(1000);
    assertThat(f.notes.totalEffects()).isEqualTo(1000);
    assertThat(f.notes.keysAppliedMoreThanOnce()).isZero();
    assertThat(f.applied).hasValue(1000);
    List<Long> inOrder = new ArrayList<>();
    for (long seq = 0; seq < 50; seq++) {
      inOrder.add(seq);
    }
    for (int e = 0; e < 20; e++) {
      assertThat(f.notes.arrivalOrder("entity-" + e)).as("entity-%d, seed %d", e, seed)
          .isEqualTo(inOrder);
    }
  }

  @Test
  void startRecoversAndDrainsOnItsOwnAndANewAcceptTriggersAnotherPass() {
    OutboxRecord first = f.accept("n1", 1);
    try (Replayer<Connection> replayer = f.replayer()) {
      replayer.start();
      Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> f.status(first) == Status.ACKED);
      OutboxRecord second = f.accept("n2", 1);
      replayer.onAccepted();
      Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> f.status(second) == Status.ACKED);
    }
  }

  @Test
  void a403EndsThatCommandRejectedAsForbiddenWhileOtherEntitiesDrain() {
    OutboxRecord forbidden = f.accept("shared-doc", 1);
    OutboxRecord behindIt = f.accept("shared-doc", 2);
    List<OutboxRecord> others = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      others.add(f.accept("own-" + i, 1));
    }
    f.faults.set(request -> request.idempotencyKey().equals(forbidden.idempotencyKey().value())
        ? FaultPlan.Fault.fail(403, null) : FaultPlan.Fault.NONE);
    try (Replayer<Connection> replayer = f.replayer()) {
      PassSummary pass = replayer.runPass();
      assertThat(pass.pausedReason()).as("a 403 is about one command, not the session").isNull();
      assertThat(pass.rejected()).isEqualTo(1);
      assertThat(pass.acked()).isEqualTo(7);
    }
    OutboxRecord ended = f.store.find(forbidden.commandId()).orElseThrow();
    assertThat(ended.status()).isEqualTo(Status.REJECTED);
    assertThat(ended.response().status()).isEqualTo(403);
    assertThat(f.transitions).anyMatch(t -> t.commandId().equals(forbidden.commandId())
        && t.to() == Status.REJECTED && t.reason() == Reason.FORBIDDEN);
    assertThat(f.status(behindIt)).as("the entity goes on after its refused command")
        .isEqualTo(Status.ACKED);
    for (OutboxRecord r : others) {
      assertThat(f.status(r)).isEqualTo(Status.ACKED);
    }
    f.assertListenerSawWhatTheAuditRecorded(forbidden);
  }

  @Test
  void theSessionWidePolicyTreatsA403AsRefusedCredentials() {
    OutboxRecord cmd = f.accept("n1", 1);
    f.faults.set(request -> FaultPlan.Fault.fail(403, null));
    try (Replayer<Connection> replayer = f.replayer("r",
        b -> b.forbiddenPolicy(dev.outboxreplay.ForbiddenPolicy.PAUSE_SESSION))) {
      assertThat(replayer.runPass().pausedReason()).isEqualTo(Reason.CREDENTIALS_REFUSED);
    }
    OutboxRecord waiting = f.store.find(cmd.commandId()).orElseThrow();
    assertThat(waiting.status()).isEqualTo(Status.RETRYABLE_FAILED);
    assertThat(waiting.attempt()).isZero();
  }

  @Test
  void aReconciledAckAndABatchOfAcksInOnePassRunTheApplierOnThePassThreadOneAtATime() {
    OutboxRecord unknown = f.accept("n0", 1);
    f.faults.set(request -> FaultPlan.Fault.dropResponseAfterCommit());
    try (Replayer<Connection> replayer = f.replayer()) {
      assertThat(replayer.runPass().unknown()).isEqualTo(1);
    }
    f.faults.set(FaultPlan.NONE);
    for (int i = 1; i <= 12; i++) {
      f.accept("n" + i, 1);
    }
    f.clock.advance(Duration.ofMinutes(5));
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
    ResponseApplier<Connection> guarded = (tx, command, response) -> {
      if (inside.incrementAndGet() > 1) {
        overlaps.incrementAndGet();
      }
      threads.add(Thread.currentThread());
      inside.decrementAndGet();
    };
    PassSummary pass;
    try (Replayer<Connection> replayer = f.replayer("r",
        b -> b.concurrency(8).responseApplier(guarded))) {
      pass = replayer.runPass();
    }
    assertThat(pass.reconciled()).isEqualTo(1);
    assertThat(pass.acked()).isEqualTo(13);
    assertThat(threads).hasSize(13).allMatch(t -> t == Thread.currentThread());
    assertThat(overlaps).hasValue(0);
    f.assertListenerSawWhatTheAuditRecorded(unknown);
  }

  @Test
  void unknownRowsAreNeverPoisonedByMaxAttemptsButReconciledFirst() {
    OutboxRecord cmd = f.accept("n1", 1);
    f.faults.set(request -> FaultPlan.Fault.dropResponseAfterCommit());
    try (Replayer<Connection> replayer = f.replayer("r", b -> b.retryPolicy(
        dev.outboxreplay.RetryPolicy.builder().random(new SplittableRandom(3)).maxAttempts(1)
            .build()))) {
      assertThat(replayer.runPass().unknown()).isEqualTo(1);
      assertThat(f.store.find(cmd.commandId()).orElseThrow().attempt()).isEqualTo(1);
      f.clock.advance(Duration.ofMinutes(10));
      PassSummary second = replayer.runPass();
      assertThat(second.rejected()).as("attempts are spent, but it may have committed").isZero();
      assertThat(second.reconciled()).isEqualTo(1);
    }
    assertThat(f.status(cmd)).isEqualTo(Status.ACKED);
    assertThat(f.posts(cmd)).isEqualTo(1);
  }

  @Test
  void awaitTerminalAndAwaitDrainedReturnOnceTheStartedReplayerIsDone() throws Exception {
    OutboxRecord first = f.accept("n1", 1);
    OutboxRecord second = f.accept("n1", 2);
    try (Replayer<Connection> replayer = f.replayer()) {
      replayer.start();
      assertThat(replayer.awaitTerminal(second.commandId(), Duration.ofSeconds(30)))
          .hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(Status.ACKED));
      assertThat(replayer.awaitDrained(Duration.ofSeconds(30))).isTrue();
    }
    assertThat(f.status(first)).isEqualTo(Status.ACKED);
  }

  @Test
  void awaitDrainedGivesUpAtItsTimeoutWhileACommandWaitsForARetry() throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    f.faults.set(request -> FaultPlan.Fault.fail(503, Duration.ofHours(1)));
    try (Replayer<Connection> replayer = f.replayer()) {
      replayer.runPass();
      assertThat(replayer.awaitDrained(Duration.ofMillis(300))).isFalse();
      assertThat(replayer.awaitTerminal(cmd.commandId(), Duration.ofMillis(300))).isEmpty();
      assertThatThrownBy(() -> replayer.awaitTerminal(
          dev.outboxreplay.CommandId.parse("01890a5d-ac96-774b-bcce-b302099a8057"),
          Duration.ofMillis(10))).isInstanceOf(java.util.NoSuchElementException.class);
    }
  }

  @Test
  void whileTheAppSaysTheNetworkIsLostNothingIsSentUntilItIsBack() throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    try (Replayer<Connection> replayer = f.replayer()) {
      replayer.onNetworkLost();
      PassSummary held = replayer.runPass();
      assertThat(held.pausedReason()).isEqualTo(Reason.OFFLINE);
      assertThat(held.claimed()).isZero();
      f.clock.advance(Duration.ofDays(4));
      assertThat(replayer.runPass().pausedReason()).as("no time limit: the app said so")
          .isEqualTo(Reason.OFFLINE);
      assertThat(f.posts(cmd)).isZero();
      replayer.onNetworkAvailable(); // also asks for a pass on the replayer's own thread
      assertThat(replayer.awaitTerminal(cmd.commandId(), Duration.ofSeconds(30)))
          .hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(Status.ACKED));
    }
    assertThat(f.store.find(cmd.commandId()).orElseThrow().attempt()).isEqualTo(1);
  }

  @Test
  void aConnectivityMonitorThatReportsTheNetworkLostHoldsReplayUntilItReportsItBack()
      throws Exception {
    OutboxRecord cmd = f.accept("n1", 1);
    AtomicReference<Runnable> available = new AtomicReference<>();
    AtomicReference<Runnable> lost = new AtomicReference<>();
    dev.outboxreplay.ConnectivityMonitor monitor = new dev.outboxreplay.ConnectivityMonitor() {
      @Override
      public void start(Runnable onNetworkAvailable) {
        throw new AssertionError("the replayer asks for both callbacks");
      }

      @Override
      public void start(Runnable onNetworkAvailable, Runnable onNetworkLost) {
        available.set(onNetworkAvailable);
        lost.set(onNetworkLost);
        onNetworkLost.run(); // the first probe failed
      }

      @Override
      public void close() {}
    };
    try (Replayer<Connection> replayer = f.replayer("r", b -> b.connectivityMonitor(monitor))) {
      replayer.start();
      assertThat(lost.get()).isNotNull();
      assertThat(replayer.runPass().pausedReason()).isEqualTo(Reason.OFFLINE);
      assertThat(f.posts(cmd)).isZero();
      available.get().run();
      assertThat(replayer.awaitTerminal(cmd.commandId(), Duration.ofSeconds(30)))
          .hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(Status.ACKED));
    }
  }
}
