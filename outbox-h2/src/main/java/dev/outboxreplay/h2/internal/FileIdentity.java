package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The key {@link H2File}'s registry keeps a file under. H2 names a file by its real
 * path (symbolic links resolved, as in macOS's temporary folders), and {@link
 * RecoveringFileSystem} looks files up by that name; the application may have given a path
 * through a link. Both become the same key here.
 */
final class FileIdentity {
  private FileIdentity() {}

  /**
   * {@code file}'s real path; for a file that does not exist yet, its folder's real path and its
   * name; the absolute, normalized path when neither resolves (as H2 does).
   */
  static Path of(Path file) {
    Path absolute = file.toAbsolutePath().normalize();
    try {
      return absolute.toRealPath();
    } catch (IOException e) {
      Path parent = absolute.getParent();
      if (parent != null && absolute.getFileName() != null) {
        try {
          return parent.toRealPath().resolve(absolute.getFileName());
        } catch (IOException ignored) {
          // no folder either: the absolute path is the best name there is
        }
      }
      return absolute;
    }
  }
}
