package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;

/**
 * Looks at an existing database file, read-only, before H2 opens it for writing. H2 opens a file
 * whose newest chunk is damaged at the newest chunk it can still read, which may be an older
 * state or, when every chunk header is damaged, an empty database, and then writes to it: the
 * commands in the lost chunks are gone for good. This check refuses such a file instead, and
 * writes nothing to any file it refuses:
 *
 * <ul>
 *   <li>a 0-byte file (not an H2 database);
 *   <li>a file H2 cannot read at all (corrupt store header, not an H2 file);
 *   <li>a file whose readable state is older than the version its own store header records.
 *       H2 writes the store header only after the chunk it names is written, so a process kill
 *       never leaves a header newer than what the file holds: an older readable state means
 *       damage, not a crash. One exception is mended instead: a file H2 closed cleanly whose
 *       chunk layout still lists a dead chunk that the last chunk overwrote. H2 reads it whole
 *       when opened as after a crash, so the clean mark is dropped from its header ({@link
 *       CleanMarkRepair}).
 * </ul>
 *
 * Before that check, a file opened for writing whose store header lags behind its last commits
 * gets a header that leads to them ({@link StoreHeaderRepair}): H2's recovery would
 * otherwise drop commits that had returned.
 *
 * <p>A file another process (or this one) has open is not checked here: whoever opened it first
 * checked it. Damage inside a data page that the headers do not show is found when the page is
 * read, as a fatal {@link OutboxStorageException}; when H2's database open is the reader, what
 * H2 wrote while failing is put back ({@link OpenJournal}).
 */
public final class FileCheck {
  private static final String RECOVERY = "it was left untouched; restore it from a backup, or "
      + "extract what H2 can still read with org.h2.tools.Recover (see docs/operations.md, "
      + "\"A damaged file\"), then move it away";

  private FileCheck() {}

  /**
   * Checks {@code file} (an existing {@code .mv.db}) without writing to it, unless another process
   * (or this JVM) has it open. With {@code repairHeader}, a plain file no one has open whose store
   * header lags behind its last commits is first given a header that leads to them ({@link
   * StoreHeaderRepair}), the only write made here.
   *
   * @return true when the file was in use, and so not checked
   * @throws OutboxStorageException (not retryable) naming the file when it must not be opened
   */
  public static boolean verifyBeforeOpen(Path file, char[] fileKey, boolean repairHeader) {
    long size;
    try {
      size = Files.size(file);
    } catch (IOException e) {
      throw new OutboxStorageException("cannot open database file " + file + ": " + e, e);
    }
    if (size == 0) {
      if (repairHeader && LockOwner.of(file).state() == LockOwner.State.GONE) {
        // H2 made the file and its creator was killed before H2 wrote a byte: the lock file
        // beside it names a process that is gone. Nothing to lose; H2 starts it as new.
        return false;
      }
      throw new OutboxStorageException("cannot open database file " + file
          + ": it is empty (0 bytes), so it is not an H2 database; it was left untouched (move "
          + "it away to start a new one)");
    }
    if (inUse(file)) {
      return true;
    }
    FileKey key = FileKey.of(fileKey);
    if (repairHeader) {
      StoreHeaderRepair.repairLogged(file, key, "before opening");
    }
    MVStore store;
    try {
      store = FileKey.apply(key, new MVStore.Builder().fileName(file.toString()).readOnly())
          .open();
    } catch (MVStoreException e) {
      if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
        return true; // opened by another process between our look and H2's
      }
      throw new OutboxStorageException("cannot open database file " + file
          + ": H2 cannot read it (" + H2Errors.firstLine(e.getMessage()) + "); " + (fileKey == null
          ? "if it is encrypted, open it with its encryption key; otherwise "
          : "the encryption key may be wrong; otherwise ") + RECOVERY, e);
    } catch (RuntimeException e) {
      throw new OutboxStorageException("cannot open database file " + file
          + ": it is not a readable H2 database (" + e + "); " + RECOVERY, e);
    }
    long recorded;
    long readable;
    boolean clean;
    try (store) {
      Map<String, Object> header = store.getStoreHeader();
      recorded = headerVersion(header);
      readable = store.getCurrentVersion();
      clean = header.get("clean") != null && !"0".equals(String.valueOf(header.get("clean")));
    }
    if (readable >= recorded) {
      if (clean && repairHeader) {
        H2File.checkedWhole(file, recorded); // its open need not look again under lock
      }
      return false;
    }
    boolean whole = clean && CleanMarkRepair.recoveryReaches(file, key, recorded);
    if (whole && repairHeader && CleanMarkRepair.mendBeforeOpen(file, key, recorded, readable)) {
      return false;
    }
    throw new OutboxStorageException("cannot open database file " + file + ": "
        + (whole ? "" : "it is damaged: ") + "H2 can read only version " + readable
        + " of it, older than version " + recorded + " that its store header records"
        + (readable == 0 ? " (it would open as an empty database)"
            : " (recent commits would be lost)") + "; " + (whole ? "H2 closed it cleanly, "
            + "and read as after a crash it is whole: opening it once for writing (not "
            + "read-only) drops the clean mark from its store header (docs/h2-file-handling.md, "
            + "\"A clean close that H2 compacts\")" : RECOVERY));
  }

  /**
   * True when another process (or this one) holds the file open: it has a lock on it, or an
   * {@code H2Database} of this JVM opened it.
   */
  public static boolean inUse(Path file) {
    if (H2File.openHereCount(file) > 0) {
      // Not looked at: closing a channel of our own would drop the locks H2 holds on the file
      // in this process (POSIX locks belong to the process, and any close releases them).
      return true;
    }
    return lockedByAnotherProcess(file);
  }

  /**
   * After a read-only open that H2 refused with "The database is read only" (90097): H2 2.5.252
   * leaves the file's channel open then, so this JVM holds a lock on the file and every later
   * open here finds the file in use, until the channel is collected and closed. Asks the
   * collector for it, for up to {@code bound}; returns once the lock is gone.
   */
  public static void releaseLockLeftByRefusedOpen(Path file, Duration bound) {
    long deadline = System.nanoTime() + bound.toNanos();
    while (lockedInThisJvm(file) && System.nanoTime() < deadline) {
      System.gc();
      LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
    }
  }

  private static boolean lockedInThisJvm(Path file) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      FileLock lock = channel.tryLock(0L, Long.MAX_VALUE, true);
      if (lock != null) {
        lock.release();
      }
      return false;
    } catch (OverlappingFileLockException e) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * True when another process holds a lock on {@code file}. False, without a look, when an
   * {@code H2Database} of this JVM has it open (see {@link #inUse}).
   */
  static boolean lockedByAnotherProcess(Path file) {
    if (H2File.openHereCount(file) > 0) {
      return false;
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      FileLock lock = channel.tryLock(0L, Long.MAX_VALUE, true);
      if (lock == null) {
        return true;
      }
      lock.release();
      return false;
    } catch (OverlappingFileLockException e) {
      return true;
    } catch (IOException e) {
      return false; // let H2 report what is wrong with the file
    }
  }

  private static long headerVersion(Map<String, Object> header) {
    Object version = header.get("version");
    if (version instanceof Number n) {
      return n.longValue();
    }
    try {
      return version == null ? 0 : Long.parseLong(version.toString(), 16);
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
