package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retryable failures (a handover, a lock not released in time) are told apart from fatal ones
 * (a corrupt file), and a process whose file server died goes on without pausing.
 */
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
   * Three processes open one new file at one moment and keep it open, as app instances would.
   * (With children that exit right after writing, H2 refused one of them in 5 of 6 rounds
   * without the retry; with children that stay, the race did not show in 6 rounds either way,
   * so this checks the path, and the classification test above the decision.)
   */
  @Test
  void processesOpeningOneFileAtTheSameMomentAllGetIn() throws Exception {
    int rounds = 6;
    int lost = 0;
    for (int round = 0; round < rounds; round++) {
      Path file = dir.resolve("together-" + round);
      List<ChildJvm> children = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          children.add(ChildJvm.start(OpenLoopbackChild.class,
              dir.resolve("together-" + round + "-" + i + ".err"), file.toString(), "together"));
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
            lost++;
            System.out.println("round " + round + ": " + line);
          }
        }
      } finally {
        for (ChildJvm child : children) {
          child.close();
        }
      }
    }
    assertThat(lost).as("children that could not open the file, of %d", rounds * 3).isZero();
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

  @Test
  void whenTheProcessServingTheFileIsKilledAReceiverGoesOnWithoutPausing() throws Exception {
    Path file = dir.resolve("shared");
    try (ChildJvm server = servingFile(file)) {
      try (H2Database db = H2Database.open(file)) { // served by the child
        AtomicInteger consumed =
            new AtomicInteger();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch killedLatch =
            new CountDownLatch(1);
        Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db),
            (Connection tx, InboxMessage m) -> {
              if (m.messageId().equals("in-flight")) {
                inside.countDown();
                killedLatch.await(); // the serving process dies inside this transaction
              }
              consumed.incrementAndGet();
              return m.bytes();
            }, (scope, id, result) -> { }).build();
        inbox.receive("s", "before", new byte[] {1});
        CompletableFuture<ReceiveResult> inFlight =
            CompletableFuture.supplyAsync(
                () -> inbox.receive("s", "in-flight", new byte[] {9}));
        assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
        server.kill();
        long killed = System.nanoTime();
        killedLatch.countDown();
        assertThatThrownBy(() -> inFlight.get(30, TimeUnit.SECONDS))
            .as("its transaction died with the server: nothing committed")
            .hasCauseInstanceOf(OutboxStorageException.class);
        ReceiveResult received = callAtOnceUntilItWorks("inbox receive", killed,
            () -> inbox.receive("s", "after", new byte[] {2}));
        assertThat(received.outcome()).isEqualTo(ReceiveResult.Outcome.CONSUMED);
        assertThat(inbox.store().find("s", "in-flight")).as("rolled back").isEmpty();
        assertThat(consumed).as("the rolled-back one ran, never committed").hasValue(3);
      }
    }
  }

  @Test
  void whenTheProcessServingTheFileIsKilledTheOtherGoesOnWithoutPausing() throws Exception {
    Path file = dir.resolve("shared");
    try (ChildJvm server = servingFile(file)) {
      try (H2Database db = H2Database.open(file)) { // served by the child
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
        outbox.accept(OutboxCommand.of("op", "before", Map.of("n", 0)));
        server.kill();
        long killed = System.nanoTime();
        int[] call = {0};
        callAtOnceUntilItWorks("outbox accept", killed,
            () -> outbox.accept(OutboxCommand.of("op", "after", Map.of("n", call[0]++))));
        assertThat(outbox.store().countByStatus().values().stream().mapToLong(Long::longValue)
            .sum()).as("nothing lost").isEqualTo(2);
      }
    }
  }

  /**
   * Makes {@code call} again at once, with no pause of its own, until it succeeds (for at most
   * 10 s after {@code sinceNanos}); every failure on the way must be a retryable one. Prints and
   * checks how long it took: the target is 2 s, asserted as 5 s for a loaded machine.
   */
  private static <R> R callAtOnceUntilItWorks(String what, long sinceNanos, Callable<R> call)
      throws Exception {
    List<String> firstFailures = new ArrayList<>();
    long failedCalls = 0;
    R value = null;
    while (value == null && System.nanoTime() - sinceNanos < 10_000_000_000L) {
      try {
        value = call.call();
      } catch (OutboxStorageException e) {
        assertThat(e.retryable()).as("a handover is retryable: %s", e.getMessage()).isTrue();
        if (firstFailures.size() < 3) {
          firstFailures.add(e.getMessage());
        }
        failedCalls++;
      }
    }
    double seconds = (System.nanoTime() - sinceNanos) / 1e9;
    System.out.printf("%s: works again after %.2f s and %d failed calls%n", what, seconds,
        failedCalls);
    assertThat(value).as("%s works again; %d failed calls, first: %s", what, failedCalls,
        firstFailures).isNotNull();
    // target 2 s (measured here: 1.6-1.8 s, mostly H2 seeing the dead owner's lock as stale)
    assertThat(seconds).isLessThan(5.0);
    return value;
  }

  /** A child JVM that opened {@code file} first, so it serves the file to this process. */
  private ChildJvm servingFile(Path file) throws Exception {
    ChildJvm server = ChildJvm.start(ServeFileChild.class, dir.resolve("server.err"),
        file.toString());
    try {
      assertThat(server.nextLine(CHILD)).as(server.stderrText()).isEqualTo("READY");
      return server;
    } catch (AssertionError | Exception e) {
      server.close();
      throw e;
    }
  }
}
