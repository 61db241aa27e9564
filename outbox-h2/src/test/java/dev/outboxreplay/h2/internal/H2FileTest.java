package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.H2Database;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-file object: what it holds while a file is open, and that it lets go of it after. */
class H2FileTest {
  @TempDir Path dir;

  @Test
  void holdsAFileWhileAnyDatabaseOfThisJvmHasItOpenAndLetsGoAfter() throws Exception {
    Path base = dir.resolve("app");
    Path data = dir.resolve("app.mv.db");
    try (H2Database first = H2Database.open(base)) {
      assertThat(H2File.holds(data)).isTrue();
      assertThat(H2File.openHereCount(data)).isEqualTo(1);
      try (H2Database second = H2Database.open(base)) {
        assertThat(H2File.openHereCount(data)).isEqualTo(2);
        assertThat(second.file()).isEqualTo(first.file());
      }
      assertThat(H2File.openHereCount(data)).isEqualTo(1);
      assertThat(FileCheck.inUse(data)).as("open here: in use without a look").isTrue();
    }
    assertThat(H2File.openHereCount(data)).isZero();
    assertThat(H2File.holds(data)).as("nothing held once the last database closed").isFalse();
    assertThat(FileCheck.inUse(data)).isFalse();
  }

  @Test
  void aRefusedOpenLeavesNothingHeld() throws Exception {
    Path data = dir.resolve("empty.mv.db");
    Files.createFile(data);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> H2Database.open(data))
        .hasMessageContaining("0 bytes");
    assertThat(H2File.holds(data)).isFalse();
  }

  @Test
  void aJournalIsTheFilesUntilItEnds() throws Exception {
    Path data = dir.resolve("journal.mv.db");
    Files.write(data, new byte[] {1, 2, 3});
    OpenJournal journal = OpenJournal.begin(data);
    assertThat(journal).isNotNull();
    assertThat(H2File.journalOf(data)).isSameAs(journal);
    assertThat(OpenJournal.begin(data)).as("one journal per file").isNull();
    journal.close();
    assertThat(H2File.journalOf(data)).isNull();
    assertThat(H2File.holds(data)).isFalse();
  }

  @Test
  void aLentChannelIsReadThroughUntilTakenBack() throws Exception {
    Path data = dir.resolve("lent.mv.db");
    Files.write(data, new byte[] {1});
    try (FileChannel channel = FileChannel.open(data, StandardOpenOption.READ)) {
      boolean seen = PeekFileSystem.readThrough(data, channel,
          () -> H2File.lentChannel(data) == channel);
      assertThat(seen).isTrue();
    }
    assertThat(H2File.lentChannel(data)).isNull();
    assertThat(H2File.holds(data)).isFalse();
  }

  @Test
  void aCleanCheckIsTakenOnce() throws Exception {
    Path data = dir.resolve("clean.mv.db");
    H2File.checkedWhole(data, 283);
    assertThat(H2File.takeCheckedWhole(data)).isEqualTo(283);
    assertThat(H2File.takeCheckedWhole(data)).isEqualTo(-1);
    assertThat(H2File.holds(data)).isFalse();
  }

  /**
   * Opens and closes racing on one file from many threads, with the object let go of each time
   * the count reaches 0: no open is lost to an object being let go of at the same moment.
   */
  @Test
  void racingOpensAndClosesKeepTheCount() throws Exception {
    Path data = dir.resolve("race.mv.db");
    int threads = 8;
    int rounds = 20_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < rounds; i++) {
            H2File.openedHere(data, null);
            assertThat(H2File.openHereCount(data)).isPositive();
            H2File.closedHere(data);
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
      assertThat(H2File.openHereCount(data)).isZero();
      assertThat(H2File.holds(data)).isFalse();
    } finally {
      pool.shutdownNow();
    }
  }
}
