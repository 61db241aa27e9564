package dev.outboxreplay.h2.internal;

import java.nio.file.Path;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * H2's default file system for read-only opens, with one difference: a lock file whose owner is
 * gone ({@link LockOwner}) is not there. H2's read-only open refuses any lock file, even one a
 * killed process left, and never takes it over; through this scheme such a lock no longer
 * stops a reader, while a lock whose owner runs still does (90020, and the caller then reads
 * through that owner's server). Nothing is written, moved or deleted: the stale lock file stays
 * for the next writable open, which takes it over.
 *
 * <p>Used as the {@code outboxread:} prefix of read-only URLs; registered with H2 by
 * {@link #register}. Public only because H2 makes each path of the scheme with the class's
 * public constructor. Stateless: each look at a lock file probes its owner anew.
 */
public final class ReadOnlyFileSystem extends FilePathWrapper {
  /** The URL prefix (without the colon). */
  public static final String SCHEME = "outboxread";
  private static final ReadOnlyFileSystem INSTANCE = new ReadOnlyFileSystem();

  /** Makes the scheme known to H2 in this JVM; idempotent. */
  public static void register() {
    FilePath.register(INSTANCE);
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public boolean exists() {
    String name = getBase().toString();
    if (!name.endsWith(".lock.db") || !getBase().exists()) {
      return getBase().exists();
    }
    Path lock = Path.of(name);
    Path dataFile = lock.resolveSibling(lock.getFileName().toString()
        .replaceFirst("\\.lock\\.db$", ".mv.db"));
    return LockOwner.of(dataFile).state() != LockOwner.State.GONE;
  }
}
