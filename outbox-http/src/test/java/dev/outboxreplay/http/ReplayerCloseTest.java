package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Closing a replayer while its pass writes never breaks the database: the pass thread is stopped
 * by a flag, not interrupted (an interrupt during a write closes H2's file channel for the whole
 * JVM).
 */
class ReplayerCloseTest {
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
  void closingDuringAPassAHundredTimesLeavesTheDatabaseUsable() throws Exception {
    long seed = Seeds.seed("close.seed", "close-during-pass");
    SplittableRandom random = new SplittableRandom(seed);
    int accepted = 0;
    for (int round = 0; round < 100; round++) {
      for (int i = 0; i < 8; i++) {
        f.accept("entity-" + (accepted % 16), accepted++);
      }
      // close right after the k-th status change the pass reports: in the middle of its writes
      CountDownLatch changes = new CountDownLatch(1 + random.nextInt(20));
      try (Replayer<Connection> replayer = f.replayer("r" + round, b -> b.concurrency(4)
          .listener(new OutboxListener() {
            @Override
            public void onTransition(Transition t) {
              changes.countDown();
            }
          }))) {
        replayer.start();
        assertThat(changes.await(30, TimeUnit.SECONDS)).isTrue();
      }
      Map<Status, Long> counts = f.store.countByStatus();
      assertThat(counts.values().stream().mapToLong(Long::longValue).sum())
          .as("round %d, seed %d: the database still answers", round, seed).isEqualTo(accepted);
      OutboxRecord another = f.accept("after-close", round);
      assertThat(f.store.find(another.commandId())).as("and still takes writes").isPresent();
      accepted++;
    }
    f.clock.advance(Duration.ofMinutes(5)); // leases of rows a close left held run out
    try (Replayer<Connection> replayer = f.replayer()) {
      for (int pass = 0; pass < 20 && Status.countOpen(f.store.countByStatus()) > 0; pass++) {
        replayer.runPass();
        f.clock.advance(Duration.ofMinutes(5));
      }
    }
    assertThat(f.store.countByStatus().get(Status.ACKED)).as("seed %d", seed)
        .isEqualTo(accepted);
    assertThat(f.notes.keysAppliedMoreThanOnce()).isZero();
  }
}
