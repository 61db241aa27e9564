package dev.outboxreplay.h2.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.internal.PrivateFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * One H2 database file as the library handles it, and the only way into the library's machinery
 * around H2: opening ({@link #open}, {@link #attach}), the damage checks and header repairs before
 * and during H2's open ({@link FileCheck}, {@link StoreHeaderRepair}, {@link CleanMarkRepair}),
 * the journal that undoes a failed open's writes ({@link OpenJournal}), the handover between
 * processes ({@link Handover}), the commit-outcome check ({@link CommitOutcome}), compaction
 * ({@link CompactionSchedule}) and the close that lets other processes go ({@link ServedHere}).
 * {@code H2Database} reaches them through an {@link Opened} and nothing else; an ArchUnit test
 * ({@code H2MachineryBoundaryTest}) keeps it so.
 *
 * <p>What the library knows about a file between and during its opens is this object's state:
 * how many {@code H2Database}s of this JVM have it open and with which key, a clean header the
 * check before the open found whole (so the look under H2's lock is skipped), the journal of an
 * open in progress, and a channel lent to H2's read-only store while H2 holds its lock. There is
 * one object per file per JVM, found by the file's real path ({@link FileIdentity}), in the one
 * registry of this package: H2 itself keeps one database per file per JVM, which every {@code
 * H2Database} of the JVM on that file shares with its locks, and H2 makes the file-system objects
 * that call back here ({@link RecoveringFileSystem}, {@link PeekFileSystem}) from a path alone. An
 * object leaves the registry as soon as it holds nothing.
 *
 * <p>Thread-safe.
 */
public final class H2File {
  /**
   * How long opening a connection retries while other processes open the same file at the same
   * moment or take it over from a process that went away.
   */
  public static final Duration OPEN_RACE_RETRY = Handover.RETRY_FOR;

  private static final ConcurrentHashMap<Path, H2File> FILES = new ConcurrentHashMap<>();

  private final Path identity;
  // guarded by this
  private int openHere;
  private FileKey key;
  private long checkedWhole = -1;
  private boolean retired;
  // read without the lock on every write or read H2 makes through the library's file systems
  private volatile OpenJournal journal;
  private volatile FileChannel lent;

  private H2File(Path identity) {
    this.identity = identity;
  }

  // ---- the per-file state

  private boolean holdsNothing() {
    return openHere == 0 && checkedWhole < 0 && journal == null && lent == null;
  }

  /** Runs {@code change} on {@code file}'s object, made if missing and let go if then empty. */
  private static <T> T update(Path file, Function<H2File, T> change) {
    Path identity = FileIdentity.of(file);
    while (true) {
      H2File f = FILES.computeIfAbsent(identity, H2File::new);
      synchronized (f) {
        if (f.retired) {
          continue; // let go of between the look-up and the lock: take the new one
        }
        T result = change.apply(f);
        if (f.holdsNothing()) {
          f.retired = true;
          FILES.remove(identity, f);
        }
        return result;
      }
    }
  }

  /** {@code file}'s object, or null when the library holds nothing of it. */
  private static H2File find(Path file) {
    // no isEmpty() shortcut: under concurrent updates it may miss a mapping just made
    return FILES.get(FileIdentity.of(file));
  }

  /**
   * Records that an {@code H2Database} of this JVM opened {@code file} (key null: plain): the
   * checks then take the file as in use without a look, and the look under H2's lock reads it
   * with that key. Public for tests that stand in for such an open.
   */
  public static void openedHere(Path file, char[] fileKey) {
    FileKey opened = FileKey.of(fileKey);
    update(file, f -> {
      f.openHere++;
      if (opened != null) {
        f.key = opened;
      }
      return null;
    });
  }

  /** Undoes one {@link #openedHere}; the key goes with the last one. */
  public static void closedHere(Path file) {
    update(file, f -> {
      if (f.openHere > 0 && --f.openHere == 0) {
        f.key = null;
      }
      return null;
    });
  }

  /** How many {@code H2Database}s of this JVM have {@code file} open now. */
  static int openHereCount(Path file) {
    H2File f = find(file);
    if (f == null) {
      return 0;
    }
    synchronized (f) {
      return f.openHere;
    }
  }

  /** The key an {@code H2Database} of this JVM has {@code file} open with, or null. */
  static FileKey keyOpenedWith(Path file) {
    H2File f = find(file);
    if (f == null) {
      return null;
    }
    synchronized (f) {
      return f.key;
    }
  }

  /**
   * Records that H2 opens {@code file}, cleanly closed at {@code version}, at that version: the
   * look under H2's lock that follows ({@link CleanMarkRepair#mendLocked}) is then skipped, so an
   * open pays for one look, not two.
   */
  static void checkedWhole(Path file, long version) {
    update(file, f -> {
      f.checkedWhole = version;
      return null;
    });
  }

  /** Takes what {@link #checkedWhole} recorded for {@code file}: the version, or -1. */
  static long takeCheckedWhole(Path file) {
    return update(file, f -> {
      long version = f.checkedWhole;
      f.checkedWhole = -1;
      return version;
    });
  }

  /**
   * Makes {@code journal} the one of its file; false when another open of this JVM journals the
   * file already.
   */
  static boolean beginJournal(OpenJournal journal) {
    return update(journal.file(), f -> {
      if (f.journal != null) {
        return false;
      }
      f.journal = journal;
      return true;
    });
  }

  /** Ends {@code journal} when it is its file's; idempotent. */
  static void endJournal(OpenJournal journal) {
    update(journal.file(), f -> {
      if (f.journal == journal) {
        f.journal = null;
      }
      return null;
    });
  }

  /** The journal of {@code file}, or null when none is active. */
  static OpenJournal journalOf(Path file) {
    H2File f = find(file);
    return f == null ? null : f.journal;
  }

  /** Lends {@code channel} as {@code file}'s bytes until {@link #takeBack}. */
  static void lend(Path file, FileChannel channel) {
    update(file, f -> {
      f.lent = channel;
      return null;
    });
  }

  /** Ends {@link #lend} of {@code channel}. */
  static void takeBack(Path file, FileChannel channel) {
    update(file, f -> {
      if (f.lent == channel) {
        f.lent = null;
      }
      return null;
    });
  }

  /** The channel lent for {@code file}, or null. */
  static FileChannel lentChannel(Path file) {
    H2File f = find(file);
    return f == null ? null : f.lent;
  }

  /** Whether the library holds anything of {@code file} in this JVM; for tests. */
  static boolean holds(Path file) {
    return find(file) != null;
  }

  // ---- opening

  /** H2's data file of the database {@code base} (its path without {@code .mv.db}). */
  public static Path dataFileOf(Path base) {
    return base.resolveSibling(base.getFileName() + ".mv.db");
  }

  /** H2's lock file of the database {@code base}. */
  public static Path lockFileOf(Path base) {
    return base.resolveSibling(base.getFileName() + ".lock.db");
  }

  /** Sets H2's JVM-wide bind address to loopback unless set; call before any H2 class loads. */
  public static void requestLoopback() {
    LocalOnly.requestLoopback();
  }

  /** The SQL dialect of H2 files. */
  public static Dialect dialect() {
    return H2Dialect.INSTANCE;
  }

  /** Whether {@code e} reports a unique index or primary key violation. */
  public static boolean isUniqueViolation(SQLException e) {
    return H2Errors.isUniqueViolation(e);
  }

  /**
   * How to open a file.
   *
   * @param base the base path of the database file (without {@code .mv.db}), absolute
   * @param encryptionKey the file encryption password, or null; not copied
   * @param compactionInterval how often to compact, or null for no compaction
   */
  public record Options(Path base, boolean multiProcess, boolean createIfMissing,
      boolean readOnly, char[] encryptionKey, int maxPoolSize, Duration lockTimeout,
      Duration openWait, Duration compactionInterval) {
    public Options {
      Objects.requireNonNull(base, "base == null");
    }

    Path dataFile() {
      return dataFileOf(base);
    }

    Path lockFile() {
      return lockFileOf(base);
    }
  }

  /**
   * Opens the file through a pool of the library's own, in this order: the H2 version is the one
   * the library was built with; a missing file is refused unless it may be created; multi-process
   * mode listens on loopback only; the file and folder are writable unless read-only; an existing
   * file is checked (and its header repaired) before H2 sees it, a new one gets owner-only
   * folders; the file is registered as open here; a failed open's writes are journaled; a lock
   * left by a killed process is removed; the pool opens; the lock file and a new data file become
   * owner-only; {@code WRITE_DELAY} is set to 0; compaction is scheduled.
   *
   * @throws OutboxStorageException when the file must not or cannot be opened; retryable when
   *     other processes kept racing to open it for longer than the open wait
   */
  public static Opened open(Options options, Duration compactionBudget) {
    Path dataFile = options.dataFile();
    H2Version.require(dataFile);
    boolean readOnly = options.readOnly();
    boolean existed = Files.exists(dataFile);
    if ((!options.createIfMissing() || readOnly) && !existed) {
      throw new OutboxStorageException("no outbox database at " + dataFile + " (it is not "
          + "created because " + (readOnly ? "it is opened read-only" : "createIfMissing is off")
          + ")");
    }
    if (options.multiProcess()) {
      LocalOnly.requireLoopback(dataFile);
    }
    if (!readOnly) {
      requireWritable(dataFile, existed);
    }
    boolean inUse = false;
    if (existed) {
      // read-only: a refused file is not touched; one opened for writing may first get a store
      // header that leads to its last commits (StoreHeaderRepair)
      inUse = FileCheck.verifyBeforeOpen(dataFile, options.encryptionKey(), !readOnly);
    } else {
      try {
        PrivateFiles.createParents(dataFile);
      } catch (IOException e) {
        throw new OutboxStorageException("cannot create the folder of " + dataFile + ": " + e, e);
      }
    }
    // registered before H2 opens it: from here on no check in this JVM opens (and, closing it,
    // unlocks) a channel of its own on the file
    openedHere(dataFile, options.encryptionKey());
    // not while another H2Database of this JVM has the file: its writes are not ours to undo
    OpenJournal journal = existed && !readOnly && !inUse ? OpenJournal.begin(dataFile) : null;
    if (existed && !readOnly && options.multiProcess()) {
      LockOwner.removeIfGone(dataFile); // a killed process's lock: no 2-4 s takeover
    }
    PoolOpener opener = new PoolOpener(options.base(), options.multiProcess(),
        options.createIfMissing(), readOnly, options.encryptionKey(), options.maxPoolSize(),
        options.lockTimeout(), options.openWait());
    HikariDataSource pool;
    try {
      pool = readOnly ? opener.openReadOnly() : opener.open(false);
    } catch (RuntimeException e) {
      if (journal != null) {
        journal.undoAfter(e);
      }
      closedHere(dataFile);
      if (readOnly && H2Errors.isReadOnlyRefusal(e)) {
        FileCheck.releaseLockLeftByRefusedOpen(dataFile, Duration.ofSeconds(5));
      }
      throw e instanceof OutboxStorageException refused && H2Errors.isLockedByAnother(refused)
          ? H2Errors.lockedBy(dataFile, refused) : e;
    } finally {
      if (journal != null) {
        journal.close();
      }
    }
    if (readOnly) {
      return new Opened(dataFile, pool, pool, true, false, null); // nothing is written
    }
    // The lock file is new on every open and holds the server's access key.
    PrivateFiles.restrictToOwner(options.lockFile());
    if (!existed) {
      PrivateFiles.restrictToOwner(dataFile);
    }
    try {
      // Persisted by H2, but set on every open so a file made elsewhere gets it too. Run again
      // when the process serving the file closes under it: setting it twice does no harm.
      Handover.retry(() -> {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
          return s.execute("SET WRITE_DELAY 0");
        }
      }, e -> false, options.openWait());
    } catch (SQLException e) {
      pool.close();
      closedHere(dataFile);
      throw H2Errors.onOpen(dataFile, e);
    }
    CompactionSchedule compaction = options.compactionInterval() == null ? null
        : new CompactionSchedule(pool, dataFile, options.compactionInterval(), compactionBudget);
    return new Opened(dataFile, pool, pool, false, options.multiProcess(), compaction);
  }

  /**
   * Takes the application's own data source: it must reach an H2 file database whose commits are
   * durable on return (unless {@code allowWriteDelay}); it is refused unless {@code
   * withoutCrashRepairs} accepts that the library cannot look at the file before H2 opens it.
   * The file is compacted on it every {@code compactionInterval} (null: never).
   *
   * @throws OutboxStorageException naming what is wrong or what would be lost
   */
  public static Opened attach(DataSource dataSource, boolean allowWriteDelay,
      boolean withoutCrashRepairs, Duration compactionInterval, Duration compactionBudget) {
    H2Version.require(Path.of("(data source)"));
    Path base = PoolOpener.checkApplicationDataSource(dataSource, allowWriteDelay).file();
    Path dataFile = dataFileOf(base);
    if (!withoutCrashRepairs) {
      throw new OutboxStorageException("refusing the application's own data source for "
          + dataFile + ": it opens the file itself, so the library cannot look at the "
          + "file before H2 does, and after a process kill H2's own recovery can open it "
          + "without commits that had returned (the repair the library runs before its own "
          + "opens; docs/h2-file-handling.md, \"Commits H2's recovery would miss after a kill\"). "
          + "Let the library open the file "
          + "(H2Database.builder().file(...)) and take the application's connections from "
          + "H2Database.dataSource(), or accept this with withoutCrashRepairs(true)");
    }
    // the file is compacted on the application's pool as on the library's own: without it, it
    // only grew (90.9 MB against 2.9 MB after 2,000 cycles and 150 s idle)
    CompactionSchedule compaction = compactionInterval == null ? null
        : new CompactionSchedule(dataSource, dataFile, compactionInterval, compactionBudget);
    return new Opened(dataFile, null, dataSource, false, false, compaction);
  }

  /**
   * Refuses, before H2 tries and fails slowly, a file this user may not write or whose folder it
   * may not create files in (H2 creates its lock file there).
   */
  private static void requireWritable(Path dataFile, boolean existed) {
    Path folder = dataFile.toAbsolutePath().getParent();
    if (existed && !Files.isWritable(dataFile)) {
      throw new OutboxStorageException("cannot open " + dataFile + " for writing: the file is "
          + "read-only for this user; reading it (read-only opens, outbox status) still works");
    }
    if (folder != null && Files.isDirectory(folder) && !Files.isWritable(folder)) {
      throw new OutboxStorageException("cannot open " + dataFile + " for writing: this user "
          + "may not create files in " + folder + ", where H2 keeps the file's lock; reading it "
          + "(read-only opens, outbox status) still works");
    }
  }

  /**
   * One open of the file: its connections, and what runs around H2 while it is open. Thread-safe;
   * {@link #close} is idempotent.
   */
  public static final class Opened implements AutoCloseable {
    private final Path dataFile;
    /** The pool this object opened and closes; null for an application's own data source. */
    private final HikariDataSource pool;
    private final DataSource connections;
    private final boolean readOnly;
    /** Whether other processes may reach the file through this one (H2's auto-server). */
    private final boolean multiProcess;
    /** Compacts the file while it is open; null when read-only or off. */
    private final CompactionSchedule compaction;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Opened(Path dataFile, HikariDataSource pool, DataSource connections, boolean readOnly,
        boolean multiProcess, CompactionSchedule compaction) {
      this.dataFile = dataFile;
      this.pool = pool;
      this.connections = connections;
      this.readOnly = readOnly;
      this.multiProcess = multiProcess;
      this.compaction = compaction;
    }

    /** The {@code .mv.db} file. */
    public Path dataFile() {
      return dataFile;
    }

    /** Where connections come from: the library's pool, or the application's data source. */
    public DataSource dataSource() {
      return connections;
    }

    /**
     * Returns when the last commit on {@code connection} is known to have happened.
     *
     * @throws SQLException with SQL state {@code 08007} when H2 closed the session during it
     */
    public void requireCommitKnown(Connection connection) throws SQLException {
      CommitOutcome.requireKnown(connection);
    }

    /** Runs {@code call} again while the file changes hands, for at least the open race wait. */
    public <R> R retry(Handover.SqlCall<R> call, Predicate<SQLException> alsoRetry,
        Duration bound) throws SQLException {
      return Handover.retry(call, alsoRetry,
          bound.compareTo(Handover.RETRY_FOR) > 0 ? bound : Handover.RETRY_FOR);
    }

    /** The handover failure in {@code failure}'s causes, or null. */
    public SQLException passingCause(Throwable failure) {
      return Handover.handoverCause(failure);
    }

    /** {@code e}, from {@code action} on this file, as the library reports it. */
    public OutboxStorageException onStatement(String action, SQLException e) {
      return H2Errors.onStatement(dataFile, action, e);
    }

    /**
     * Compacts the file now for up to {@code budget}; 0 when read-only or served elsewhere.
     *
     * @throws OutboxStorageException when compacting failed
     */
    public long compactNow(Duration budget) {
      if (readOnly) {
        return 0;
      }
      try {
        return CompactionSchedule.runNow(connections, budget).shrunkBy();
      } catch (SQLException | RuntimeException e) {
        throw new OutboxStorageException("compacting " + dataFile + " failed: " + e, e);
      }
    }

    /**
     * Stops compaction (compacting once more), lets other processes go when this JVM serves the
     * file to them and holds it once, then closes the pool and unregisters the file. An
     * application's own data source stays open.
     */
    @Override
    public void close() {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      if (compaction != null) {
        compaction.close();
      }
      if (pool != null && multiProcess && !readOnly) {
        ServedHere.letGoOf((RetryingOpenDataSource) pool.getDataSource(), dataFile);
      }
      if (pool != null) {
        pool.close();
        closedHere(dataFile);
      }
    }
  }
}
