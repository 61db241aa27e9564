package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.TryLockChild;
import dev.outboxreplay.testkit.ChildJvm;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mend under H2's lock looks at the file through H2's read-only store while this process
 * holds the file's exclusive lock: the lock must still hold afterwards, for every other process.
 * A look through a channel of its own would drop it on close (POSIX locks are the process's).
 */
class CleanMarkRepairTest {
  @TempDir Path dir;

  @Test
  void aLookUnderTheLockGivesUpNoLock() throws Exception {
    Path data = dir.resolve("locked.mv.db");
    try (InputStream in = CleanMarkRepairTest.class.getResourceAsStream(
        "/files/clean-close-lists-overwritten-dead-chunk.mv.db")) {
      assertThat(in).isNotNull();
      Files.copy(in, data);
    }
    try (FileChannel channel = FileChannel.open(data, StandardOpenOption.READ,
        StandardOpenOption.WRITE); FileLock lock = channel.tryLock()) {
      assertThat(lock).isNotNull();
      assertThat(CleanMarkRepair.mendLocked(channel, data, null, 283))
          .contains("cleanly at version 283 but would have opened it at version 272");
      assertThat(lock.isValid()).isTrue();
      assertThat(lockSeenByAnotherProcess(data)).as("the lock, seen by another process")
          .isEqualTo("LOCKED");
    }
    assertThat(CleanMarkRepair.versionH2Opens(data, null, false)).isEqualTo(283);
  }

  private String lockSeenByAnotherProcess(Path data) throws Exception {
    try (ChildJvm child = ChildJvm.start(TryLockChild.class, dir.resolve("trylock.err"),
        data.toString())) {
      return child.nextLine(Duration.ofSeconds(60));
    }
  }
}
