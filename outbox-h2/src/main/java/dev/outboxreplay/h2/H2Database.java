package dev.outboxreplay.h2;

import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.internal.H2File;
import dev.outboxreplay.internal.Arguments;
import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.Migration;
import dev.outboxreplay.jdbc.internal.SchemaMigrator;
import java.util.function.Predicate;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * One H2 file database, opened through a HikariCP pool with the durability settings the outbox
 * relies on, or reached through the application's own pool ({@link Builder#dataSource}). The
 * outbox store, the inbox store and the application's own tables may all live in it, so that a
 * local change and an outbox row commit in one transaction.
 *
 * <p>Opening never creates a fresh database in place of a file it cannot read, and never writes
 * to a file it refuses: a 0-byte file, a locked, corrupt or newer-format file, and a damaged one
 * that H2 would open at an older or empty state (its readable version is older than its store
 * header records) fail with a non-retryable {@link OutboxStorageException} naming the file. A
 * plain file whose damage only H2's own open finds (a page it reads at open) fails the same way;
 * what H2 wrote to it on its way out of that open is put back before the exception is thrown.
 *
 * <p>On a user's machine: nothing listens beyond loopback. In multi-process mode H2's sockets
 * (its server for the other processes and its socket file lock) bind to {@code 127.0.0.1}: this
 * class sets H2's JVM-wide {@code h2.bindAddress} to it before H2 loads, unless the application
 * set it, and refuses multi-process mode when H2 would listen elsewhere. What the library creates
 * is owner-only: missing folders {@code 0700}, a new database file and H2's lock file (which holds
 * the server's access key) {@code 0600}. H2 writes no trace file. See {@code docs/security.md}.
 *
 * <p>Thread-safe. Close it when done; rows already committed stay on disk.
 */
public final class H2Database implements JdbcDatabase, AutoCloseable {
  /** Default number of pooled connections. */
  public static final int DEFAULT_MAX_POOL_SIZE = 8;
  /**
   * How long opening a connection retries while other processes open the same file at the same
   * moment (H2's lock-file races) or take it over from a process that went away; after it, the
   * failure is a retryable {@link OutboxStorageException}.
   */
  public static final Duration OPEN_RACE_RETRY = H2File.OPEN_RACE_RETRY;
  /** Default time a statement waits for a row lock held by another transaction. */
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(10);
  /** Default time between two compactions of the file while it is open. */
  public static final Duration DEFAULT_COMPACTION_INTERVAL = Duration.ofSeconds(10);
  /** Longest one compaction runs before it leaves the rest to the next. */
  public static final Duration COMPACTION_BUDGET = Duration.ofMillis(200);

  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final Durability durability;
  private final boolean readOnly;
  /** The open file, and all the library does around H2 for it. */
  private final H2File.Opened opened;
  private final List<Runnable> beforeClose = new CopyOnWriteArrayList<>();
  private final AtomicLong diskSyncs = new AtomicLong();

  static {
    H2File.requestLoopback(); // before any H2 class loads: it reads the address once
  }

  private H2Database(Builder builder) {
    this.durability = builder.durability;
    this.readOnly = builder.readOnly;
    Duration compactionInterval = builder.compaction ? builder.compactionInterval : null;
    this.opened = builder.applicationDataSource != null
        ? H2File.attach(builder.applicationDataSource, builder.allowWriteDelay,
            builder.withoutCrashRepairs, compactionInterval, COMPACTION_BUDGET)
        : H2File.open(new H2File.Options(builder.file, builder.multiProcess,
            builder.createIfMissing, builder.readOnly, builder.encryptionKey,
            builder.maxPoolSize, builder.lockTimeout, builder.openWait, compactionInterval),
            COMPACTION_BUDGET);
  }

  /** A builder; {@link Builder#file(Path)} is required. */
  public static Builder builder() {
    return new Builder();
  }

  /** Opens {@code file} with all defaults. */
  public static H2Database open(Path file) {
    return builder().file(file).build();
  }

  /** Pooled connections to this database, for the application's own tables and transactions. */
  public DataSource dataSource() {
    return opened.dataSource();
  }

  /** The {@code .mv.db} file on disk. */
  public Path file() {
    return opened.dataFile();
  }

  /** The durability mode the library's own commits honor. */
  public Durability durability() {
    return durability;
  }

  /**
   * Forces every committed change to the disk ({@code CHECKPOINT SYNC}). The library calls it
   * after its own commits in {@link Durability#POWER_LOSS_SAFE} mode; call it after committing a
   * transaction of your own that must survive a power cut.
   */
  public void syncToDisk(Connection connection) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("CHECKPOINT SYNC");
    }
    diskSyncs.incrementAndGet();
  }

  /**
   * How many times {@link #syncToDisk} forced committed changes to the disk through this instance
   * since it opened: after every commit of the library's stores in {@link
   * Durability#POWER_LOSS_SAFE} mode, never in the default mode. For monitoring and tests.
   */
  public long diskSyncs() {
    return diskSyncs.get();
  }

  /**
   * Brings {@code component}'s tables up to date by running the numbered steps the history table
   * {@code outbox_schema_history} does not list yet. Steps must be idempotent
   * ({@code IF NOT EXISTS}): H2 commits each DDL statement by itself.
   *
   * @return the component's schema version afterwards
   * @throws OutboxStorageException when the file holds a newer version of the component than
   *     {@code steps} knows, or a step fails
   */
  public int migrate(String component, List<Migration> steps) {
    return SchemaMigrator.migrate(this, component, steps, java.time.Clock.systemUTC());
  }

  /**
   * The schema version of {@code component} recorded in the file's history table, 0 when the
   * file holds none (no history table, or no step of that component). Reads only.
   */
  public int installedVersion(String component) {
    return SchemaMigrator.installedVersion(this, component);
  }

  @Override
  public Dialect dialect() {
    return H2File.dialect();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: while the file's server goes away and another process takes it over, and H2's
   * lock-file races; for at least {@link #OPEN_RACE_RETRY} after the first failure.
   */
  @Override
  public <R> R retry(SqlCall<R> call, Predicate<SQLException> alsoRetry, Duration bound)
      throws SQLException {
    return opened.retry(call::call, alsoRetry, bound);
  }

  @Override
  public SQLException passingCause(Throwable failure) {
    return opened.passingCause(failure);
  }

  @Override
  public OutboxStorageException onStatement(String action, SQLException e) {
    return opened.onStatement(action, e);
  }

  /** Whether this database was opened {@linkplain Builder#readOnly(boolean) read-only}. */
  public boolean readOnly() {
    return readOnly;
  }

  /**
   * True when {@code e} reports a unique index or primary key violation (SQL state 23505), for
   * the application's own inserts into this database as for the library's.
   */
  public static boolean isUniqueViolation(SQLException e) {
    return H2File.isUniqueViolation(e);
  }

  /**
   * Called by stores after each of their own commits, and by an application after committing a
   * transaction it wrote outbox or inbox rows in: returns when that commit is known to have
   * happened, and in power-loss mode syncs it to the disk.
   *
   * @throws SQLException with SQL state {@code 08007} ("transaction resolution unknown") when
   *     H2 closed the connection's session during the commit (the process serving the file
   *     closed or shut down at that moment): H2 can then report a commit as done that its
   *     session's close rolled back. Run an idempotent write again (an accept with the same
   *     command id finds its row or writes it); anything else must find out what is stored.
   *     Also thrown when the sync fails.
   */
  public void afterCommit(Connection connection) throws SQLException {
    opened.requireCommitKnown(connection);
    if (durability == Durability.POWER_LOSS_SAFE) {
      syncToDisk(connection);
    }
  }

  /**
   * Compacts the file now, on the calling thread, for up to {@link #COMPACTION_BUDGET}: rewrites
   * the live pages of sparse chunks and moves chunks toward the start of the file, then truncates
   * it. Space freed less than H2's retention time ago (45 s) is not reused yet. Commits of other
   * threads go on between the bounded steps. The schedule ({@link Builder#compaction}) does the
   * same every {@linkplain Builder#compactionInterval interval}; this works with it off too.
   *
   * @return bytes the file shrank by; 0 also when this process reaches the file through another
   *     process's server (that process compacts it), or when the database is read-only
   * @throws OutboxStorageException when compacting failed
   */
  @Override
  public long compactFile() {
    return opened.compactNow(COMPACTION_BUDGET);
  }

  /**
   * Registers an action run by {@link #close()} before the pool closes; stores use it to give back
   * connections they hold.
   */
  public void beforeClose(Runnable action) {
    beforeClose.add(Objects.requireNonNull(action, "action == null"));
  }

  /**
   * Releases what stores hold, stops the compaction schedule and compacts the file once more (steps
   * begun within {@link #COMPACTION_BUDGET}, at the database's retention time; a failure there is
   * logged, not thrown), then closes the pool, and with it the file when this process opened it
   * itself; H2 compacts nothing while it closes. When other processes reach the file through this
   * one (multi-process mode, with this process serving the file), it first closes the file for them
   * too (H2's {@code SHUTDOWN}): their sessions between statements are closed at once, an open
   * transaction of theirs rolls back, one running a statement is closed when the statement ends (H2
   * waits up to twice the {@linkplain Builder#lockTimeout lock timeout} for it). Their calls then
   * fail as when a serving process dies; the library's own calls go on in the process that takes
   * the file over. So when this returns, the file is written, closed and unlocked, and this process
   * serves nothing. When another process serves the file, or another {@code H2Database} of this JVM
   * still has it open, only this instance's connections are closed. Idempotent: later calls do
   * nothing.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Runnable action : beforeClose) {
      action.run();
    }
    opened.close(); // an application's own data source stays open: it is the application's
  }

  @Override
  public String toString() {
    return "H2Database[" + file() + ", " + durability + "]";
  }

  /** Configures an {@link H2Database}; each setter validates and names its argument. */
  public static final class Builder {
    private Path file;
    private Durability durability = Durability.PROCESS_CRASH_SAFE;
    private boolean multiProcess = true;
    private boolean createIfMissing = true;
    private boolean readOnly;
    private char[] encryptionKey;
    private DataSource applicationDataSource;
    private boolean allowWriteDelay;
    private boolean withoutCrashRepairs;
    private int maxPoolSize = DEFAULT_MAX_POOL_SIZE;
    private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private Duration openWait = OPEN_RACE_RETRY;
    private Duration compactionInterval = DEFAULT_COMPACTION_INTERVAL;
    private boolean compaction = true;

    private Builder() {}

    /**
     * The database file: either its base path ({@code data/app}) or the H2 file itself
     * ({@code data/app.mv.db}). Required.
     */
    public Builder file(Path file) {
      Objects.requireNonNull(file, "file == null");
      Path absolute = file.toAbsolutePath().normalize();
      String name = absolute.getFileName().toString();
      if (name.endsWith(".mv.db")) {
        absolute = absolute.resolveSibling(name.substring(0, name.length() - ".mv.db".length()));
      }
      if (absolute.getFileName().toString().isEmpty()) {
        throw new IllegalArgumentException("file has no name: " + file);
      }
      this.file = absolute;
      return this;
    }

    /** Default {@link Durability#PROCESS_CRASH_SAFE}. */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability == null");
      return this;
    }

    /**
     * Whether other processes may open the same file at the same time (H2 {@code AUTO_SERVER}:
     * the first process serves the file to the others). Default true. When false, a second
     * process fails to open the file with an error naming it.
     */
    public Builder multiProcess(boolean multiProcess) {
      this.multiProcess = multiProcess;
      return this;
    }

    /**
     * Opens an existing file for reading only: nothing is created, migrated or written, not even
     * H2's lock file or store header. When another process has the file open, it is read through
     * that process (multi-process mode; that process keeps writing, this one only reads). While a
     * read-only open holds a file no one else had open, other processes cannot open it. Stores
     * must be opened with their {@code openExisting} method. Default false.
     */
    public Builder readOnly(boolean readOnly) {
      this.readOnly = readOnly;
      return this;
    }

    /**
     * Encrypts the file at rest with H2's AES cipher ({@code CIPHER=AES}), under this
     * application-supplied key; without it the file is plain. The key must be given on every open,
     * by every process sharing the file; it cannot be added to, changed on or removed from an
     * existing file (H2's {@code ChangeFileEncryption} tool does that, offline). A file opened
     * without its key, or with another key, is refused. The key is copied; it is never logged or
     * printed. While the database is open the key stays in this JVM's memory, by file, so that
     * the repairs after a process kill or a clean close read the file as H2 does (see
     * docs/h2-file-handling.md, "Encrypted files"). Where to keep it (the OS keychain) is the
     * application's choice.
     *
     * @throws IllegalArgumentException when the key is empty or holds whitespace (H2 splits the
     *     password at the first space)
     */
    public Builder encryptionKey(char[] key) {
      Objects.requireNonNull(key, "key == null");
      if (key.length == 0) {
        throw new IllegalArgumentException("encryption key is empty");
      }
      for (char c : key) {
        if (Character.isWhitespace(c)) {
          throw new IllegalArgumentException("encryption key holds whitespace");
        }
      }
      this.encryptionKey = key.clone();
      return this;
    }

    /**
     * Uses the application's own pool (a Spring- or Quarkus-managed {@code DataSource}, a desktop
     * app's own) instead of opening one; {@link #file} and the options about opening the file do
     * not apply then, and {@link H2Database#close()} leaves the data source open. It must reach an
     * H2 file database; at {@link #build()} the library checks that commits are durable on return
     * ({@code WRITE_DELAY} 0) and refuses otherwise, naming the setting, and refuses it unless
     * {@link #withoutCrashRepairs} accepts what such a pool costs. The library compacts the file
     * on it as on its own pool. The application's URL
     * decides the rest (multi-process mode, bind address, file permissions, encryption): see
     * {@code docs/security.md}.
     */
    public Builder dataSource(DataSource dataSource) {
      this.applicationDataSource = Objects.requireNonNull(dataSource, "dataSource == null");
      return this;
    }

    /**
     * With {@link #dataSource}: accepts that the library cannot repair the file after a process
     * kill, because the application's pool opens it before the library can look at it (see
     * {@code docs/h2-file-handling.md}, "Commits H2's recovery would miss after a kill": H2's own recovery can then open the file
     * without commits that had returned). Without it, such a data source is refused, naming what
     * it would lose. The file is compacted on the application's pool either way ({@link
     * #compaction}). Default false.
     */
    public Builder withoutCrashRepairs(boolean withoutCrashRepairs) {
      this.withoutCrashRepairs = withoutCrashRepairs;
      return this;
    }

    /**
     * With {@link #dataSource}: accepts a database whose {@code WRITE_DELAY} is not 0, so that
     * accepts committed in the last delay are lost if the process is killed. Default false.
     */
    public Builder allowWriteDelay(boolean allowWriteDelay) {
      this.allowWriteDelay = allowWriteDelay;
      return this;
    }

    /** Whether a missing file is created. Default true; tools that only read should say false. */
    public Builder createIfMissing(boolean createIfMissing) {
      this.createIfMissing = createIfMissing;
      return this;
    }

    /** Connections in the pool, at least 2. Default {@link #DEFAULT_MAX_POOL_SIZE}. */
    public Builder maxPoolSize(int maxPoolSize) {
      if (maxPoolSize < 2) {
        throw new IllegalArgumentException("maxPoolSize < 2: " + maxPoolSize);
      }
      this.maxPoolSize = maxPoolSize;
      return this;
    }

    /** How long a write waits for a row lock held by another transaction. Default 10 s. */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = Arguments.positive("lockTimeout", lockTimeout);
      return this;
    }

    /**
     * How long opening keeps trying while another process holds the file without serving it
     * (it opened it in single-process mode, or is starting or closing) or is taking it over,
     * counted from the first refusal. Default {@link #OPEN_RACE_RETRY}; a tool that should fail
     * fast on a busy file gives less (zero: one more try after 10 to 20 ms).
     *
     * @throws IllegalArgumentException when it is negative
     */
    public Builder openWait(Duration openWait) {
      this.openWait = Arguments.notNegative("openWait", openWait);
      return this;
    }

    /**
     * How often the file is compacted while it is open, in the process that has it open itself
     * (in multi-process mode, the one serving it), each time for up to {@link
     * #COMPACTION_BUDGET} in steps that hold H2's store lock briefly (measured: up to 191 ms
     * while others commit; up to 402 ms in a run after which nobody committed, whose steps
     * are larger, docs/h2-file-handling.md). Default {@link #DEFAULT_COMPACTION_INTERVAL}.
     */
    public Builder compactionInterval(Duration interval) {
      this.compactionInterval = Arguments.positive("compactionInterval", interval);
      return this;
    }

    /**
     * Whether the file is compacted on a schedule while it is open and once more by {@link
     * H2Database#close()}, in steps begun within {@link H2Database#COMPACTION_BUDGET} (default
     * true). Off, the file only grows (H2 reuses freed space but never gives it back): H2's own
     * compaction at close is turned off in either case, since H2 runs it at retention time 0
     * (docs/h2-file-handling.md, "A clean close that H2 compacts").
     */
    public Builder compaction(boolean enabled) {
      this.compaction = enabled;
      return this;
    }

    /**
     * Opens the database.
     *
     * @throws IllegalStateException when no file was set
     * @throws OutboxStorageException when the file is locked, corrupt or unreadable;
     *     {@linkplain OutboxStorageException#retryable() retryable} when other processes kept
     *     racing to open it for longer than the {@linkplain #openWait open wait}
     */
    public H2Database build() {
      if (file == null && applicationDataSource == null) {
        throw new IllegalStateException("file (or an application's dataSource) is required");
      }
      return new H2Database(this);
    }
  }
}
