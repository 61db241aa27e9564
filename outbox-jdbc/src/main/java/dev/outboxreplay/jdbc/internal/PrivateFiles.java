package dev.outboxreplay.jdbc.internal;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owner-only files and folders for what the library creates: folders {@code 0700}, files
 * {@code 0600}. On a file system without POSIX permissions (Windows) nothing is changed and a
 * new file gets the access list of its folder, which under a user's profile is that user's.
 */
public final class PrivateFiles {
  private static final Logger LOG = LoggerFactory.getLogger(PrivateFiles.class);
  private static final boolean POSIX =
      FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

  private PrivateFiles() {}

  /** Creates the missing folders above {@code file}, each owner-only; existing ones are kept. */
  public static void createParents(Path file) throws IOException {
    Deque<Path> missing = new ArrayDeque<>();
    for (Path dir = file.toAbsolutePath().getParent(); dir != null && !Files.exists(dir);
        dir = dir.getParent()) {
      missing.push(dir);
    }
    for (Path dir : missing) {
      if (POSIX) {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
      } else {
        Files.createDirectory(dir);
      }
    }
  }

  /** Whether this file system has POSIX permissions (not on Windows). */
  public static boolean posix() {
    return POSIX;
  }

  /** Makes {@code file} readable and writable by its owner only, if it exists. */
  public static void restrictToOwner(Path file) {
    if (!POSIX || !Files.exists(file)) {
      return;
    }
    try {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException | SecurityException e) {
      LOG.warn("could not make {} owner-only", file, e);
    }
  }
}
