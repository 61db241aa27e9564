package dev.outboxreplay.h2;

import java.io.IOException;
import java.nio.file.Path;

/** The port H2's lock file tells other processes to connect to. */
final class LockFilePort {
  private LockFilePort() {}

  /** The port in {@code lockFile}; -1 when it names none. */
  static int of(Path lockFile) {
    try {
      return H2LockFile.read(lockFile).port();
    } catch (IOException | IllegalStateException e) {
      return -1; // no lock file (yet, or any more), or one without a server
    }
  }
}
