package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Real kills exactly at the inbox's failure points: a receiver child ({@link InboxReceiverChild})
 * takes the seeded stream (duplicates, out of order) and halts itself with {@link Runtime#halt}
 * at a chosen call of {@code after-consume-commit-before-projection} or
 * {@code after-projection-before-mark}; the next child opens the same files, recovers what the
 * dead one left, and receives a stream of its own messages plus a redelivery of the previous
 * child's. 3 halts per point; a last child receives its whole stream. Then
 * every message was consumed once (the ratchet advanced once per message), every consumed message
 * is projected once, and every receive that returned is in the inbox ({@link
 * InboxCrashTest#verify}). Seeded: {@code -Dkill.seed=N}.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("InboxFailurePointKillTest") // its own methods one after another
class InboxFailurePointKillTest {
  static final int HALTED = 137;
  private static final List<FailurePoint> POINTS = List.of(
      FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION,
      FailurePoint.AFTER_PROJECTION_BEFORE_MARK);
  private static final int MESSAGES = 12;

  @TempDir Path dir;

  @Test
  void haltingAtEveryInboxFailurePointConsumesOnceAndProjectsOnce() throws Exception {
    long seed = Seeds.seed("kill.seed", "InboxFailurePointKillTest");
    int perPoint = Integer.getInteger("kill.inboxPerPoint", 3);
    SplittableRandom random = new SplittableRandom(seed);
    Path inbox = dir.resolve("crypto");
    Path history = dir.resolve("history");
    Map<FailurePoint, Integer> halted = new EnumMap<>(FailurePoint.class);
    Set<String> acknowledged = new HashSet<>();
    int children = 0;
    for (FailurePoint point : POINTS) {
      while (halted.getOrDefault(point, 0) < perPoint) {
        assertThat(children).as("seed %d: children started", seed).isLessThan(20 * perPoint);
        int exit = runChild(inbox, history, seed, point.label(), 1 + random.nextInt(8),
            acknowledged, children++);
        if (exit == HALTED) {
          halted.merge(point, 1, Integer::sum);
        }
      }
    }
    assertThat(runChild(inbox, history, seed, null, 0, acknowledged, children++))
        .as("seed %d: the last child receives the whole stream", seed).isZero();
    System.out.printf("InboxFailurePointKillTest seed %d: %d children, halts %s, %d messages%n",
        seed, children, halted, acknowledged.size());
    InboxCrashTest.verify(inbox, history, acknowledged, seed, children);
    assertThat(acknowledged).hasSizeGreaterThanOrEqualTo(MESSAGES);
    assertThat(halted).containsOnlyKeys(POINTS);
  }

  private int runChild(Path inbox, Path history, long seed, String point, int call,
      Set<String> acknowledged, int number) throws Exception {
    List<String> args = point == null
        ? List.of(inbox.toString(), history.toString(), Long.toString(seed),
            Integer.toString(MESSAGES), "0", "none", "0", "c" + number + "-",
            "c" + (number - 1) + "-")
        : List.of(inbox.toString(), history.toString(), Long.toString(seed),
            Integer.toString(MESSAGES), "0", point, Integer.toString(call), "c" + number + "-",
            "c" + (number - 1) + "-");
    try (ChildJvm child = ChildJvm.start(InboxReceiverChild.class,
        dir.resolve("child-" + number + ".err"), args.toArray(String[]::new))) {
      int exit = child.waitForExit(Duration.ofSeconds(90));
      List<String> lines = child.remainingLines(Duration.ofSeconds(5));
      for (String line : lines) {
        String[] f = line.split(" ");
        assertThat(f[0]).as("child %d: %s", number, child.stderrText()).isNotEqualTo("FAILED");
        if (f.length == 5 && f[0].equals("RECEIVED") && f[4].equals("END")) {
          acknowledged.add(f[1]);
        }
      }
      if (exit != HALTED) {
        assertThat(exit).as("child %d: %s", number, child.stderrText()).isZero();
        assertThat(lines).as("child %d", number).contains("DONE");
      }
      return exit;
    }
  }
}
