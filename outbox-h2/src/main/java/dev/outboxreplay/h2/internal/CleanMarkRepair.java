package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.h2.mvstore.MVStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Files H2 closed cleanly and would then open at an older version, although its recovery reads
 * them whole (docs/h2-file-handling.md, "A clean close that H2 compacts").
 *
 * <p>Read in H2 2.5's {@code RandomAccessStore.readStoreHeader}: for a store header with the clean
 * mark, H2 demands every one of the newest chunks its chunk layout lists, and settles on an older
 * chunk, without an error, when one is missing. H2's own close (retention time 0) can leave a
 * dead chunk listed whose blocks the last chunk took. For a header without the mark, as after a
 * process kill, H2 lets a listed chunk that holds no live page be missing, and reads the newest
 * version. So when H2's recovery, read-only, reaches exactly the version the clean header
 * records and H2's ordinary open does not, the clean mark is dropped from the header; if H2's
 * ordinary open still does not reach that version, the header is put back as it was. Nothing
 * else in the file is written.
 *
 * <p>It runs at two moments: {@link FileCheck} before the library's first open of a file no
 * process holds ({@link #mendBeforeOpen}), and {@link StoreHeaderRepair} under H2's own lock each
 * time H2 takes a cleanly closed file over ({@link #mendLocked}), which includes a process that
 * reached the file through another process's server opening it itself after that process closed
 * it. H2's views of the file come from its own read-only store, reading through {@link
 * PeekFileSystem}, so that no lock of this process on the file is given up meanwhile. An
 * encrypted file is read by that store with its key, and its header written through H2's
 * decrypting view of it ({@link FileKey}).
 */
final class CleanMarkRepair {
  private static final Logger LOG = LoggerFactory.getLogger(CleanMarkRepair.class);
  private CleanMarkRepair() {}

  /**
   * Whether H2's recovery, read-only, reads {@code file} (encrypted with {@code key}, or plain
   * when it is null) at exactly {@code version}.
   */
  static boolean recoveryReaches(Path file, FileKey key, long version) {
    try {
      return versionH2Opens(file, key, true) == version;
    } catch (RuntimeException e) {
      LOG.warn("Could not check whether H2 reads all of {} when opened as after a crash: {}",
          file, e.toString());
      return false;
    }
  }

  /**
   * Drops the clean mark from the header of {@code file}, which no process has open, holding an
   * exclusive lock on it meanwhile, when H2 then opens it at {@code recorded} rather than at
   * {@code readable}.
   *
   * @return true when H2 now opens the file at {@code recorded}; false when it is in use or H2
   *     still would not (the header is then as it was)
   */
  static boolean mendBeforeOpen(Path file, FileKey key, long recorded, long readable) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ,
        StandardOpenOption.WRITE); FileLock lock = StoreHeaderRepair.tryLock(channel)) {
      if (lock == null) {
        return false;
      }
      boolean mended = PeekFileSystem.readThrough(file, channel,
          () -> mend(channel, file, key, recorded));
      if (mended) {
        LOG.warn("Repaired before opening: {}", mended(file, recorded, readable));
      }
      return mended;
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not drop the clean mark from the store header of {}: {}", file,
          e.toString());
      return false;
    }
  }

  /**
   * Under the exclusive lock H2 has just taken on {@code channel} (the file's bytes), before it
   * reads: mends a cleanly closed file, as {@link #mendBeforeOpen} does, unless {@link FileCheck}
   * just found that H2 opens it whole.
   *
   * @return what was changed, for the log, or null
   * @throws IOException when the file cannot be read or written
   */
  static String mendLocked(FileChannel channel, Path file, FileKey key, long recorded)
      throws IOException {
    if (H2File.takeCheckedWhole(file) == recorded) {
      return null;
    }
    return PeekFileSystem.readThrough(file, channel, () -> {
      long readable = versionH2Opens(file, key, false);
      if (readable >= recorded) {
        return null;
      }
      if (versionH2Opens(file, key, true) == recorded && mend(channel, file, key, recorded)) {
        return mended(file, recorded, readable);
      }
      LOG.warn("H2 opens {} at version {}, older than version {} its clean store header "
          + "records, and its recovery does not read that version either: recent commits are "
          + "lost; see docs/operations.md, \"A damaged file\"", file, readable, recorded);
      return null;
    });
  }

  /** What a mend changed, for the log. */
  private static String mended(Path file, long recorded, long readable) {
    return "H2 closed " + file + " cleanly at version " + recorded + " but would have opened it "
        + "at version " + readable + "; read as after a crash it is whole, so the clean mark was "
        + "dropped from its store header and H2 opens version " + recorded;
  }

  /**
   * Drops the clean mark through {@code raw} (the file's bytes, lent to {@link PeekFileSystem}),
   * and puts it back unless H2 then reads the file at {@code recorded}.
   */
  private static boolean mend(FileChannel raw, Path file, FileKey key, long recorded)
      throws IOException {
    FileChannel channel = FileKey.view(key, raw, file);
    byte[] original = StoreHeaderRepair.headerBlocks(channel);
    if (!StoreHeaderRepair.writeWithoutCleanMark(channel, recorded)) {
      return false;
    }
    if (versionH2Opens(file, key, false) == recorded) {
      return true;
    }
    StoreHeaderRepair.writeHeaderBlocks(channel, original);
    return false;
  }

  /**
   * The version H2's read-only store opens {@code file} (encrypted with {@code key}, or plain when
   * it is null) at, in its recovery mode when asked, reading through {@link PeekFileSystem}.
   */
  static long versionH2Opens(Path file, FileKey key, boolean recoveryMode) {
    PeekFileSystem.register();
    MVStore.Builder builder = FileKey.apply(key, new MVStore.Builder()
        .fileName(PeekFileSystem.SCHEME + ":" + file.toAbsolutePath()).readOnly());
    if (recoveryMode) {
      builder.recoveryMode();
    }
    try (MVStore store = builder.open()) {
      return store.getCurrentVersion();
    }
  }
}
