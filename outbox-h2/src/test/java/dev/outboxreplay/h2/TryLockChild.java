package dev.outboxreplay.h2;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Child process: tries to take an exclusive OS lock on the given file, as H2 does on its data
 * file, and prints {@code LOCKED} when another process holds a lock on it, else {@code FREE}.
 */
public final class TryLockChild {
  private TryLockChild() {}

  public static void main(String[] args) throws Exception {
    try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      FileLock lock = channel.tryLock();
      System.out.println(lock == null ? "LOCKED" : "FREE");
      if (lock != null) {
        lock.release();
      }
    }
  }
}
