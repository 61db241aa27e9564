package dev.outboxreplay.h2;

import static dev.outboxreplay.h2.RatchetStandIn.count;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxEntry;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Two receiver processes share one inbox file and receive the same stream with duplicates; 20
 * rounds of SIGKILLs at random points. In half the rounds both are killed; in the other half one
 * of them, chosen at random (the one serving the file or the other), and the survivor must go on
 * to the end of the stream without a failed receive and without any receive taking longer than
 * the handover bound (target 2 s, asserted as 5 s). After each round, reopening and recovery must
 * leave every consumed message consumed exactly once (one consume log row, one ratchet step) and
 * projected exactly once. Set {@code -Dcrash.seed=N} to replay; the seed is printed.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("InboxCrashTest") // its own methods one after another
class InboxCrashTest {
  private static final int ROUNDS = 20;
  private static final int MESSAGES = 150;
  /** Milliseconds between deliveries in rounds that kill one receiver: the two overlap. */
  private static final String PACED_MILLIS = "5";

  @TempDir Path dir;

  @Test
  void receiversKilledAtRandomPointsNeverConsumeTwiceOrLoseAProjection() throws Exception {
    long seed = Seeds.seed("crash.seed", "InboxCrashTest");
    SplittableRandom random = new SplittableRandom(seed);
    Path inboxFile = dir.resolve("crypto");
    Path historyFile = dir.resolve("history");
    Set<String> acknowledged = new HashSet<>();
    int finished = 0;
    long longestSurvivorMillis = 0;
    long longestAfterServerKill = 0;
    int survivorReceives = 0;

    for (int round = 0; round < ROUNDS; round++) {
      // Even rounds kill both receivers at one random moment, both mid-stream. Odd rounds start
      // receiver 0 first (so it serves the file), then receiver 1, both paced so that they
      // overlap, and kill one of them: alternately the one serving the file (a handover) and the
      // other. The survivor goes on to the end of the stream. The last round lets both finish.
      boolean last = round == ROUNDS - 1;
      boolean takeover = !last && round % 2 == 1;
      boolean killServer = round % 4 == 1;
      int killAfter = random.nextInt(1, takeover ? 150 : 300);
      List<String> lines = new ArrayList<>();
      List<String> survivorLines = new ArrayList<>();
      List<ChildJvm> children = new ArrayList<>();
      try {
        for (int k = 0; k < 2; k++) {
          children.add(ChildJvm.start(InboxReceiverChild.class,
              dir.resolve("child-" + round + "-" + k + ".err"), inboxFile.toString(),
              historyFile.toString(), Long.toString(seed), Integer.toString(MESSAGES),
              takeover ? PACED_MILLIS : "0"));
          if (takeover && k == 0) {
            readUntilFirstReceive(children.get(0), lines); // it opened the file: it serves it
          }
        }
        if (takeover) {
          // both receive before the countdown starts: a kill of the serving one then always
          // catches the other inside a receive, however slowly the second JVM started
          readUntilFirstReceive(children.get(1), killServer ? survivorLines : lines);
        }
        ChildJvm first = children.get(takeover && !killServer ? 1 : 0);
        ChildJvm second = children.get(takeover && !killServer ? 0 : 1);
        if (last) {
          finished += readToEnd(first, lines) + readToEnd(second, lines);
        } else {
          for (int i = 0; i < killAfter; i++) {
            String line = first.nextLine(Duration.ofSeconds(120));
            lines.add(line);
            if (line.equals("DONE")) {
              finished++;
              break;
            }
          }
          first.kill();
          if (takeover) {
            finished += readToEnd(second, survivorLines);
            lines.addAll(survivorLines);
          } else {
            second.kill();
            lines.addAll(second.remainingLines(Duration.ofSeconds(30)));
          }
          lines.addAll(first.remainingLines(Duration.ofSeconds(30)));
        }
      } finally {
        children.forEach(ChildJvm::close);
      }
      long roundLongest = 0;
      for (String line : survivorLines) {
        if (line.equals("OPENING")) {
          continue;
        }
        String[] f = line.split(" ");
        assertThat(f[0]).as("seed %d round %d: the survivor's receives go on through the "
            + "handover: %s", seed, round, line).isEqualTo("RECEIVED");
        roundLongest = Math.max(roundLongest, Long.parseLong(f[3]));
        survivorReceives++;
      }
      if (takeover) {
        System.out.printf("round %d: %s killed after %d lines; the other went on with %d "
            + "receives, longest %d ms%n", round, killServer ? "the serving receiver"
            : "the other receiver", killAfter, survivorLines.size(), roundLongest);
        if (killServer) {
          longestAfterServerKill = Math.max(longestAfterServerKill, roundLongest);
        }
      }
      longestSurvivorMillis = Math.max(longestSurvivorMillis, roundLongest);
      for (String line : lines) {
        String[] f = line.split(" ");
        if (f.length == 5 && f[0].equals("RECEIVED") && f[4].equals("END")) {
          acknowledged.add(f[1]);
        }
      }
      verify(inboxFile, historyFile, acknowledged, seed, round);
    }
    assertThat(finished).as("receivers that reached the end of the stream").isPositive();
    assertThat(acknowledged).hasSize(MESSAGES);
    System.out.println("InboxCrashTest: " + ROUNDS + " rounds, 2 receivers each, "
        + acknowledged.size() + " messages each consumed and projected exactly once; "
        + survivorReceives + " receives by survivors of a kill, none failed, longest "
        + longestSurvivorMillis + " ms");
    assertThat(longestAfterServerKill).as("seed %d: a survivor of the serving process's kill "
        + "had a receive caught in the handover (else this test did not test it)", seed)
        .isGreaterThan(300);
    assertThat(longestSurvivorMillis).as("seed %d: longest receive of a survivor, target 2 s, "
        + "asserted for a loaded machine", seed).isLessThan(5_000);
  }

  /** Reads a child's output up to its first receive: by then it has opened the file. */
  private static void readUntilFirstReceive(ChildJvm child, List<String> lines)
      throws Exception {
    String line;
    do {
      line = child.nextLine(Duration.ofSeconds(120));
      lines.add(line);
    } while (!line.startsWith("RECEIVED") && !line.startsWith("FAILED"));
  }

  /** Reads a child's output up to DONE and waits for it to exit; returns 1. */
  private static int readToEnd(ChildJvm child, List<String> lines) throws Exception {
    String line;
    while (!(line = child.nextLine(Duration.ofSeconds(120))).equals("DONE")) {
      lines.add(line);
    }
    child.waitForExit(Duration.ofSeconds(60));
    return 1;
  }

  /** Both files, opened together and closed together. */
  private record OpenFiles(H2Database inbox, H2Database history) implements AutoCloseable {
    /**
     * Opens the two files at once: after a kill each open waits out H2's check of the killed
     * process's lock file (about 2 s), and nothing in the checks depends on the order.
     */
    static OpenFiles open(Path inboxFile, Path historyFile) {
      CompletableFuture<H2Database> history = CompletableFuture.supplyAsync(
          () -> H2Database.open(historyFile), task -> new Thread(task, "open-history").start());
      H2Database inbox;
      try {
        inbox = H2Database.open(inboxFile);
      } catch (RuntimeException e) {
        H2Database opened = history.handle((db, failure) -> db).join();
        if (opened != null) {
          opened.close();
        }
        throw e;
      }
      try {
        return new OpenFiles(inbox, history.join());
      } catch (CompletionException e) {
        inbox.close();
        throw e.getCause() instanceof RuntimeException cause ? cause : e;
      }
    }

    @Override
    public void close() {
      history.close();
      inbox.close();
    }
  }

  /**
   * Opens both files right after the receivers were killed. Seen once in a clean-clone run: the
   * history file's lock, left by a killed receiver, passed H2's liveness check while the
   * AUTO_SERVER port it names refused ("Connection is broken"). Opening both files again, this
   * JVM's own lock and server sockets closed in between, is what a restarted app does; only the
   * opening is polled (bounded), never the checks.
   */
  private static OpenFiles openAfterKills(Path inboxFile, Path historyFile) {
    return Awaitility.await().atMost(Duration.ofSeconds(15)).pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(250))
        .ignoreExceptionsMatching(e -> e instanceof OutboxStorageException
            && String.valueOf(e.getMessage()).contains("Connection is broken"))
        .until(() -> OpenFiles.open(inboxFile, historyFile), Objects::nonNull);
  }

  static void verify(Path inboxFile, Path historyFile, Set<String> acknowledged,
      long seed, int round) throws Exception {
    try (OpenFiles files = openAfterKills(inboxFile, historyFile)) {
      H2Database db = files.inbox();
      H2Database history = files.history();
      RatchetStandIn app = new RatchetStandIn();
      Inbox<Connection> inbox = app.openInbox(db, history);
      String where = "seed " + seed + " round " + round;
      assertThat(app.consumerCalls).as("recovery must never consume").hasValue(0);
      long rows = count(db.dataSource(), "SELECT COUNT(*) FROM inbox_message");
      assertThat(count(db.dataSource(), "SELECT COUNT(*) FROM ("
          + "SELECT message_id FROM consume_log GROUP BY message_id HAVING COUNT(*) > 1)"))
          .as("%s: messages consumed more than once", where).isZero();
      assertThat(count(db.dataSource(), "SELECT COUNT(*) FROM consume_log"))
          .as("%s: one consume per inbox row", where).isEqualTo(rows);
      assertThat(count(db.dataSource(), "SELECT COALESCE(MAX(steps), 0) FROM ratchet"))
          .as("%s: ratchet advanced once per consumed message", where).isEqualTo(rows);
      assertThat(inbox.store().list(InboxEntry.State.STAGED, 1000))
          .as("%s: all projected after recovery", where).isEmpty();
      assertThat(inbox.store().list(InboxEntry.State.PROJECTED, 1000)).hasSize((int) rows);
      assertThat(count(history.dataSource(), "SELECT COUNT(*) FROM message"))
          .as("%s: one projected message per consumed message", where).isEqualTo(rows);
      for (String id : acknowledged) {
        assertThat(inbox.store().find(InboxReceiverChild.SCOPE, id))
            .as("%s: receive of %s returned, so it is in the inbox", where, id).isPresent();
      }
    }
  }
}
