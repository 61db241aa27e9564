package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxEntry;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.Status;
import dev.outboxreplay.Transport;
import dev.outboxreplay.testkit.AckingTransport;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Retryable failures (a handover, a lock not released in time) are told apart from fatal ones
 * (a corrupt file), and when the process serving a shared file dies or closes, the others go on
 * by themselves: calls caught in the handover are run again by the library where that is safe,
 * and return within the bound (target 2 s) instead of failing.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("StorageErrorsTest") // its own methods one after another
class StorageErrorsTest {
  static final Duration CHILD = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void aRowLockNotReleasedInTimeIsRetryable() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("app"))
        .lockTimeout(Duration.ofMillis(200)).build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      OutboxRecord r = Outbox.builder(store).build()
          .accept(OutboxCommand.of("op", "e", Map.of("n", 1)));
      try (Connection holder = db.dataSource().getConnection();
          PreparedStatement lock = holder.prepareStatement(
              "UPDATE outbox_command SET updated_at = updated_at WHERE command_id = ?")) {
        holder.setAutoCommit(false);
        lock.setObject(1, r.commandId().value());
        lock.executeUpdate();
        assertThatThrownBy(() -> store.claim("r", Duration.ofMinutes(1), 1,
            Instant.now().plusSeconds(1)))
            .isInstanceOfSatisfying(OutboxStorageException.class,
                e -> assertThat(e.retryable()).as(e.getMessage()).isTrue());
        holder.rollback();
      }
    }
  }

  @Test
  void h2sLockFileRacesAtOpenAreRetryableAndADamagedFileIsNot() {
    Path file = dir.resolve("x.mv.db");
    for (String race : List.of("Another process was faster", "Concurrent update",
        "Lock file recently modified")) {
      assertThat(dev.outboxreplay.h2.internal.H2Errors.onOpen(file,
          new java.sql.SQLException("Error opening database: \"" + race + "\"", "08000", 8000))
          .retryable()).as(race).isTrue();
    }
    assertThat(dev.outboxreplay.h2.internal.H2Errors.onOpen(file,
        new java.sql.SQLException("File corrupted", "90030", 90030)).retryable()).isFalse();
  }

  /**
   * Three processes open one new file at one moment, 6 rounds with children that keep it open (as
   * app instances do) and 6 with children that write and exit at once, so openers also race with
   * a closing server. Every child must get in. (Without the open retry, H2 refused a child in 5
   * of 6 rounds of the second kind; with children that stay the race did not show in 6 rounds.)
   */
  @ParameterizedTest
  @ValueSource(strings = {"together", "together-exit"})
  void processesOpeningOneFileAtTheSameMomentAllGetIn(String mode) throws Exception {
    int rounds = 6;
    List<String> lost = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      Path file = dir.resolve(mode + "-" + round);
      List<ChildJvm> children = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          children.add(ChildJvm.start(OpenLoopbackChild.class,
              dir.resolve(mode + "-" + round + "-" + i + ".err"), file.toString(), mode));
        }
        for (ChildJvm child : children) {
          assertThat(child.nextLine(CHILD)).as(child.stderrText()).isEqualTo("READY");
        }
        for (ChildJvm child : children) {
          child.send("go");
        }
        for (ChildJvm child : children) {
          String line = child.nextLine(CHILD);
          if (!"WROTE".equals(line)) {
            lost.add(mode + " round " + round + ": " + line + " / " + child.stderrText());
          }
        }
      } finally {
        for (ChildJvm child : children) {
          child.close();
        }
      }
    }
    assertThat(lost).as("children that could not open the file, of %d", rounds * 3).isEmpty();
  }

  @Test
  void aCorruptFileIsFatal() throws Exception {
    byte[] garbage = new byte[64 * 1024];
    new Random(7).nextBytes(garbage);
    Files.write(dir.resolve("app.mv.db"), garbage);
    assertThatThrownBy(() -> H2Database.open(dir.resolve("app")))
        .isInstanceOfSatisfying(OutboxStorageException.class, e -> {
          assertThat(e.retryable()).as(e.getMessage()).isFalse();
          assertThat(e.getMessage()).contains("app.mv.db");
        });
  }

  /** How the process serving the file goes away. */
  enum Departure {
    KILLED,
    CLOSED
  }

  /**
   * The serving process goes away while this process's receive is inside its consume transaction:
   * that receive still returns CONSUMED (the library runs it again on the new server; the
   * rolled-back try never committed), and the next receive works at once.
   */
  @ParameterizedTest
  @EnumSource(Departure.class)
  void aReceiveInsideItsTransactionWhenTheServerGoesAwayStillSucceeds(Departure departure)
      throws Exception {
    Path file = dir.resolve("shared");
    try (ChildJvm server = ServeFileChild.serving(file, dir.resolve("server.err"));
        H2Database db = H2Database.open(file)) { // served by the child
      AtomicInteger consumerRuns = new AtomicInteger();
      CountDownLatch inside = new CountDownLatch(1);
      CountDownLatch gone = new CountDownLatch(1);
      Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db),
          (Connection tx, InboxMessage m) -> {
            consumerRuns.incrementAndGet();
            if (m.messageId().equals("in-flight") && inside.getCount() > 0) {
              inside.countDown();
              gone.await(); // the serving process goes away inside this transaction
            }
            return m.bytes();
          }, (scope, id, result) -> { }).build();
      inbox.receive("s", "before", new byte[] {1});
      CompletableFuture<ReceiveResult> inFlight =
          CompletableFuture.supplyAsync(() -> inbox.receive("s", "in-flight", new byte[] {9}));
      assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
      long left = goAway(server, departure);
      gone.countDown();
      ReceiveResult result = inFlight.get(30, TimeUnit.SECONDS);
      double seconds = secondsSince(left);
      System.out.printf("inbox receive inside its transaction, server %s: returned after "
          + "%.2f s%n", departure, seconds);
      assertThat(result.outcome()).isEqualTo(ReceiveResult.Outcome.CONSUMED);
      assertThat(seconds).as("target 2 s; asserted for a loaded machine").isLessThan(5.0);
      assertThat(inbox.receive("s", "after", new byte[] {2}).outcome())
          .isEqualTo(ReceiveResult.Outcome.CONSUMED);
      assertThat(inbox.receive("s", "in-flight", new byte[] {9}).outcome())
          .isEqualTo(ReceiveResult.Outcome.DUPLICATE);
      assertThat(inbox.store().find("s", "in-flight")).get()
          .extracting(InboxEntry::state).isEqualTo(InboxEntry.State.PROJECTED);
      assertThat(consumerRuns).as("before, in-flight twice (the first try rolled back), after")
          .hasValue(4);
    }
  }

  /**
   * An app thread accepts commands back to back while the serving process goes away: no accept
   * fails, the longest one (the one caught in the handover) stays within the bound, and every
   * accepted command is in the file exactly once.
   */
  @ParameterizedTest
  @EnumSource(Departure.class)
  void acceptsBackToBackWhenTheServerGoesAwayNeverFail(Departure departure) throws Exception {
    Path file = dir.resolve("shared");
    try (ChildJvm server = ServeFileChild.serving(file, dir.resolve("server.err"));
        H2Database db = H2Database.open(file)) {
      Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
      AtomicLong departedAt = new AtomicLong();
      CallStats stats = new CallStats();
      CompletableFuture<List<CommandId>> accepting = CompletableFuture.supplyAsync(() -> {
        List<CommandId> ids = new ArrayList<>();
        // until 20 accepts have returned after the departure
        for (int n = 0, after = 0; after < 20; n++) {
          int number = n;
          ids.add(stats.time(() -> outbox.accept(
              OutboxCommand.of("op", "e" + (number % 3), Map.of("n", number)))).commandId());
          if (departedAt.get() != 0) {
            after++;
          }
        }
        return ids;
      });
      awaitCalls(stats, 20);
      long leaving = System.nanoTime();
      departedAt.set(goAway(server, departure));
      int returnedAtDeparture = stats.calls.get();
      String serverLog = server.stderrText();
      List<CommandId> ids = accepting.get(60, TimeUnit.SECONDS);
      System.out.printf("outbox accept back to back, server %s: %d accepts, longest %.2f s%n",
          departure, ids.size(), stats.longestSeconds());
      assertThat(stats.failures).as("failed accepts").isEmpty();
      assertThat(stats.longestSeconds()).as("target 2 s; asserted for a loaded machine")
          .isLessThan(5.0);
      H2OutboxStore store = H2OutboxStore.create(db);
      List<Integer> missing = new ArrayList<>();
      for (int i = 0; i < ids.size(); i++) {
        if (store.find(ids.get(i)).isEmpty()) {
          missing.add(i);
        }
      }
      long counted = store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
      long rows = rowsByScan(db);
      StringBuilder when = new StringBuilder();
      for (int n : missing) {
        when.append(stats.span(n, leaving)).append("; ");
      }
      assertThat(List.of(missing, counted, rows))
          .as("accepts missing (their numbers), countByStatus total, rows by a full scan; "
              + "%d accepts returned, %d of them before the departure; the server was told to "
              + "go at 0 ms and was gone at %+.1f ms; missing: %s; the server's log:%n%s",
              ids.size(), returnedAtDeparture, (departedAt.get() - leaving) / 1e6, when,
              serverLog)
          .isEqualTo(List.of(List.of(), (long) ids.size(), (long) ids.size()));
    }
  }

  /** Rows of {@code outbox_command} read one by one, not from H2's kept row count. */
  private static long rowsByScan(H2Database db) throws java.sql.SQLException {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery(
            "SELECT COUNT(DISTINCT command_id) FROM outbox_command")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * The serving process goes away while this process's replayer is in a pass, with one request
   * in flight. The replayer goes on by itself (no trigger needed): a command accepted after the
   * departure is acked within the bound, the in-flight one once its lease expires, and each answer
   * is applied exactly once.
   */
  @ParameterizedTest
  @EnumSource(Departure.class)
  void aReplayPassWhenTheServerGoesAwayGoesOnByItself(Departure departure) throws Exception {
    Path file = dir.resolve("shared");
    try (ChildJvm server = ServeFileChild.serving(file, dir.resolve("server.err"));
        H2Database db = H2Database.open(file)) {
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE applied (command_id UUID PRIMARY KEY)");
      }
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      CountDownLatch sending = new CountDownLatch(1);
      CountDownLatch gone = new CountDownLatch(1);
      Map<String, AtomicInteger> sends = new ConcurrentHashMap<>();
      Transport receiver = AckingTransport.acking(command -> {
        sends.computeIfAbsent(command.idempotencyKey().value(), k -> new AtomicInteger())
            .incrementAndGet();
        if (sending.getCount() > 0) {
          sending.countDown();
          try {
            gone.await(); // the serving process goes away while this request is out
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      });
      ResponseApplier<Connection> applier = (tx, command, response) -> {
        try (PreparedStatement ps = tx.prepareStatement("INSERT INTO applied VALUES (?)")) {
          ps.setObject(1, command.commandId().value());
          ps.executeUpdate(); // a second application of one answer fails loudly
        }
      };
      OutboxRecord inFlight = outbox.accept(OutboxCommand.of("op", "a", Map.of("n", 0)));
      try (Replayer<Connection> replayer = Replayer.builder(store, receiver)
          .owner("this-process").lease(Duration.ofSeconds(2)).responseApplier(applier).build()) {
        replayer.start();
        assertThat(sending.await(30, TimeUnit.SECONDS)).isTrue();
        long left = goAway(server, departure);
        gone.countDown();
        OutboxRecord later = outbox.accept(OutboxCommand.of("op", "b", Map.of("n", 1)));
        // No onAccepted() and no awaitTerminal (a started replayer asks for passes while someone
        // waits in it): the replayer must get going again by itself. Polled from the store.
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
            .until(() -> store.find(later.commandId()).orElseThrow().status() == Status.ACKED);
        double seconds = secondsSince(left);
        System.out.printf("replay pass, server %s: a command accepted after it acked after "
            + "%.2f s%n", departure, seconds);
        assertThat(seconds).as("target 2 s; asserted for a loaded machine").isLessThan(5.0);
        assertThat(replayer.awaitTerminal(inFlight.commandId(), Duration.ofSeconds(30))).get()
            .extracting(OutboxRecord::status).isEqualTo(Status.ACKED);
      }
      assertThat(RatchetStandIn.count(db.dataSource(), "SELECT COUNT(*) FROM applied"))
          .as("each answer applied once").isEqualTo(2);
      assertThat(sends.get(inFlight.idempotencyKey().value())).as("sent again with its key")
          .hasValueGreaterThanOrEqualTo(1);
    }
  }

  /** Durations and failures of calls made back to back on one thread. */
  private static final class CallStats {
    final List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    final AtomicInteger calls = new AtomicInteger();
    final AtomicLong longestNanos = new AtomicLong();
    /** Start and end ({@link System#nanoTime}) of each call, in call order. */
    final List<long[]> spans = new java.util.concurrent.CopyOnWriteArrayList<>();

    <R> R time(Callable<R> call) {
      long start = System.nanoTime();
      try {
        return call.call();
      } catch (Exception e) {
        failures.add(e);
        throw new IllegalStateException("call failed", e);
      } finally {
        long end = System.nanoTime();
        spans.add(new long[] {start, end});
        longestNanos.accumulateAndGet(end - start, Math::max);
        calls.incrementAndGet();
      }
    }

    /** When call {@code n} ran, in ms relative to {@code origin}, for a failure message. */
    String span(int n, long origin) {
      long[] span = spans.get(n);
      return String.format("#%d ran %+.1f to %+.1f ms", n, (span[0] - origin) / 1e6,
          (span[1] - origin) / 1e6);
    }

    double longestSeconds() {
      return longestNanos.get() / 1e9;
    }
  }

  private static void awaitCalls(CallStats stats, int calls) {
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> stats.calls.get() >= calls);
  }

  /** Makes the serving child go away; returns the moment it was gone (System.nanoTime). */
  private static long goAway(ChildJvm server, Departure departure) throws Exception {
    if (departure == Departure.KILLED) {
      server.kill();
    } else {
      server.send("close");
      assertThat(server.nextLine(CHILD)).as(server.stderrText()).isEqualTo("CLOSED");
      assertThat(server.waitForExit(CHILD)).isZero();
    }
    return System.nanoTime();
  }

  private static double secondsSince(long nanos) {
    return (System.nanoTime() - nanos) / 1e9;
  }

}
