package dev.outboxreplay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Where a desktop application keeps its outbox file, per operating system, for the user running
 * it:
 * <ul>
 *   <li>Windows: {@code %LOCALAPPDATA%\<app>} ({@code <home>\AppData\Local\<app>} without the
 *       variable). Local, not Roaming: a roaming profile copies files at log-off, and a copy of an
 *       open database file is not a database.
 *   <li>macOS: {@code ~/Library/Application Support/<app>}.
 *   <li>Other systems (Linux, BSD): {@code $XDG_DATA_HOME/<app>} when that variable holds an
 *       absolute path, otherwise {@code ~/.local/share/<app>} (the XDG base directory rules).
 * </ul>
 * Thread-safe; holds no state.
 */
public final class DataFolder {
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rwx------");

  private DataFolder() {}

  /**
   * The data folder of {@code appName} for the user running this JVM, made if missing. On a POSIX
   * file system the folder is left owner-only ({@code rwx------}), as the outbox's files are: an
   * existing one that other users could read is narrowed to owner-only. Pass the folder's
   * {@code resolve("outbox")} to {@code H2Database.open} or {@code SqliteDatabase.open}.
   *
   * @param appName a folder name: not blank, at most 100 characters, no path separator, no
   *     control character, not {@code .} or {@code ..}
   * @throws IllegalArgumentException when {@code appName} is not such a name
   * @throws UncheckedIOException when the folder cannot be made or is not a directory
   */
  public static Path forApplication(String appName) {
    Path folder = resolve(appName, System.getProperty("os.name", ""), System.getenv(),
        Path.of(System.getProperty("user.home")));
    return ensureOwnerOnly(folder);
  }

  /** The folder for {@code appName} on {@code osName} with {@code env} and {@code home}. */
  static Path resolve(String appName, String osName, Map<String, String> env, Path home) {
    checkName(appName);
    String os = osName.toLowerCase(Locale.ROOT);
    if (os.startsWith("windows")) {
      String local = env.get("LOCALAPPDATA");
      Path base = local != null && !local.isBlank() && Path.of(local).isAbsolute()
          ? Path.of(local) : home.resolve("AppData").resolve("Local");
      return base.resolve(appName);
    }
    if (os.startsWith("mac") || os.startsWith("darwin")) {
      return home.resolve("Library").resolve("Application Support").resolve(appName);
    }
    String xdg = env.get("XDG_DATA_HOME");
    Path base = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
        ? Path.of(xdg) : home.resolve(".local").resolve("share");
    return base.resolve(appName);
  }

  /** Makes {@code folder} if missing and, on POSIX, leaves it owner-only. */
  static Path ensureOwnerOnly(Path folder) {
    try {
      boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
      if (!Files.isDirectory(folder)) {
        Files.createDirectories(folder.getParent());
        if (posix) {
          Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } else {
          Files.createDirectory(folder);
        }
      }
      if (!Files.isDirectory(folder)) {
        throw new IOException(folder + " is not a directory");
      }
      if (posix && !Files.getPosixFilePermissions(folder).equals(OWNER_ONLY)) {
        Files.setPosixFilePermissions(folder, OWNER_ONLY);
      }
      return folder;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the data folder " + folder + ": " + e, e);
    }
  }

  private static void checkName(String appName) {
    Objects.requireNonNull(appName, "appName == null");
    boolean bad = appName.isBlank() || appName.length() > 100 || appName.equals(".")
        || appName.equals("..") || appName.strip().length() != appName.length()
        || appName.chars().anyMatch(c -> c == '/' || c == '\\' || c == ':' || c < 0x20
            || c == 0x7f);
    if (bad) {
      throw new IllegalArgumentException("appName must be a plain folder name (not blank, at "
          + "most 100 characters, no /, \\ or :, no control character, no leading or trailing "
          + "space, not . or ..): \"" + appName + "\"");
    }
  }
}
