package dev.outboxreplay.sqlite;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.internal.Arguments;
import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.internal.OutboxTables;
import dev.outboxreplay.sqlite.internal.SqliteDialect;
import dev.outboxreplay.sqlite.internal.SqliteErrors;
import dev.outboxreplay.sqlite.internal.SqliteFile;
import dev.outboxreplay.sqlite.internal.StatementCachingDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;
import org.sqlite.SQLiteOpenMode;

/**
 * One SQLite database file in WAL mode, opened through a HikariCP pool: the outbox store, the
 * inbox store and the application's own tables may all live in it, so that a local change and an
 * outbox row commit in one transaction ({@link #inTransaction}).
 *
 * <p>Several processes share one file through SQLite's own locks: no server and no socket, so
 * nothing listens anywhere, and a killed process leaves nothing that keeps another out (its locks
 * go with it; its {@code -wal} is recovered by the next opener). One process writes at a time;
 * a writer waits for another's write lock up to the {@linkplain Builder#busyTimeout busy timeout},
 * after which the failure is a {@linkplain OutboxStorageException#retryable() retryable} {@link
 * OutboxStorageException}. Not for network file systems (SQLite's WAL needs shared memory).
 *
 * <p>Opening never writes to a file it refuses: a 0-byte file, a file that is not SQLite, another
 * application's SQLite file ({@code application_id} set to something else), and one whose {@code
 * PRAGMA quick_check} (run at open on files up to {@link Builder#quickCheckLimit}) finds damage, each
 * fail with a non-retryable {@link OutboxStorageException} naming the file, its bytes unchanged.
 * A file the library creates, with its {@code -wal} and {@code -shm}, is owner-only ({@code
 * 0600}), in folders created {@code 0700}.
 *
 * <p>Thread-safe. Close it when done; rows already committed stay on disk.
 */
public final class SqliteDatabase implements JdbcDatabase, AutoCloseable {
  /** The {@code application_id} this library writes into the files it creates: "OBRP". */
  public static final int APPLICATION_ID = 0x4F425250;
  /** Default time a writer waits for another connection's write lock. */
  public static final Duration DEFAULT_BUSY_TIMEOUT = Duration.ofSeconds(10);
  /** Default number of pooled connections. */
  public static final int DEFAULT_MAX_POOL_SIZE = 4;
  /**
   * Default size up to which a file is checked with {@code PRAGMA quick_check} when opened
   * ({@link Builder#quickCheckLimit}). The check reads every page: measured about 5 ms per MB of
   * file on a 2-core machine (140 ms at 28 MB), so up to about 1.3 s at this size.
   */
  public static final long QUICK_CHECK_LIMIT = 256L << 20;
  /** The {@code -wal} file is cut back to this size after each checkpoint. */
  static final long WAL_SIZE_LIMIT = 16L << 20;
  /** Compiled statements each pooled connection keeps: the library uses about 40 distinct. */
  static final int STATEMENTS_PER_CONNECTION = 64;
  private static final long FIRST_PAUSE_MILLIS = 5;
  private static final long LONGEST_PAUSE_MILLIS = 200;

  private final Path file;
  private final boolean readOnly;
  private final Durability durability;
  private final Duration busyTimeout;
  private final HikariDataSource pool;
  private final List<Runnable> beforeClose = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  private SqliteDatabase(Builder b) {
    this.file = b.file;
    this.readOnly = b.readOnly;
    this.durability = b.durability;
    this.busyTimeout = b.busyTimeout;
    SqliteFile.Checked checked = SqliteFile.check(file, readOnly, b.createIfMissing,
        b.quickCheckLimit);
    SQLiteDataSource sqlite = new SQLiteDataSource(config());
    sqlite.setUrl("jdbc:sqlite:" + file + (checked.immutable() ? "?immutable=1" : ""));
    HikariConfig pool = new HikariConfig();
    pool.setPoolName("outbox-sqlite:" + file.getFileName());
    // each physical connection keeps its compiled statements (sqlite-jdbc and HikariCP keep none)
    pool.setDataSource(new StatementCachingDataSource(sqlite, STATEMENTS_PER_CONNECTION));
    pool.setMaximumPoolSize(b.maxPoolSize);
    pool.setMinimumIdle(1);
    pool.setInitializationFailTimeout(1);
    pool.setConnectionTimeout(Math.max(250, busyTimeout.toMillis() * 2));
    pool.setReadOnly(readOnly);
    try {
      this.pool = new HikariDataSource(pool);
    } catch (RuntimeException e) {
      throw SqliteFile.cannotOpen(file, e);
    }
    if (!readOnly) {
      try (Connection c = this.pool.getConnection(); Statement s = c.createStatement()) {
        s.execute("PRAGMA journal_mode = WAL");
        s.execute("PRAGMA journal_size_limit = " + WAL_SIZE_LIMIT);
        // the bookkeeping every component's migrations and every write's lock use
        s.execute(OutboxTables.HISTORY_DDL);
      } catch (SQLException e) {
        this.pool.close();
        throw SqliteErrors.onStatement(file, "opening", e);
      }
      SqliteFile.restrictToOwner(file);
    }
  }

  private SQLiteConfig config() {
    SQLiteConfig config = new SQLiteConfig();
    config.setBusyTimeout((int) Math.min(Integer.MAX_VALUE, busyTimeout.toMillis()));
    config.setSynchronous(durability == Durability.POWER_LOSS_SAFE
        ? SQLiteConfig.SynchronousMode.FULL : SQLiteConfig.SynchronousMode.NORMAL);
    // the file exists now (made by SqliteFile if it was new): never make another in its place
    config.resetOpenMode(SQLiteOpenMode.CREATE);
    config.setReadOnly(readOnly);
    return config;
  }

  /** A builder; {@link Builder#file(Path)} is required. */
  public static Builder builder() {
    return new Builder();
  }

  /** Opens {@code file} with all defaults. */
  public static SqliteDatabase open(Path file) {
    return builder().file(file).build();
  }

  @Override
  public DataSource dataSource() {
    return pool;
  }

  @Override
  public Path file() {
    return file;
  }

  @Override
  public boolean readOnly() {
    return readOnly;
  }

  /** The durability mode every commit on this file honors. */
  public Durability durability() {
    return durability;
  }

  @Override
  public Dialect dialect() {
    return SqliteDialect.INSTANCE;
  }

  /** Nothing to check: a SQLite commit that returned happened, synced as the mode says. */
  @Override
  public void afterCommit(Connection connection) {
    // synchronous=NORMAL or FULL already did what the durability mode promises
  }

  @Override
  public void beforeClose(Runnable action) {
    beforeClose.add(Objects.requireNonNull(action, "action == null"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: while the file is busy (another connection's write lock held past the busy timeout,
   * or a write since this transaction read), for at least the busy timeout after the first
   * failure, with pauses of 5 ms doubling to 200 ms.
   */
  @Override
  public <R> R retry(SqlCall<R> call, Predicate<SQLException> alsoRetry, Duration bound)
      throws SQLException {
    long boundNanos = (bound.compareTo(busyTimeout) > 0 ? bound : busyTimeout).toNanos();
    long firstFailure = 0;
    long pause = FIRST_PAUSE_MILLIS;
    while (true) {
      try {
        return call.call();
      } catch (SQLException e) {
        if (!(SqliteErrors.isBusy(e) || alsoRetry.test(e))) {
          throw e;
        }
        long now = System.nanoTime();
        if (firstFailure == 0) {
          firstFailure = now;
        } else if (now - firstFailure >= boundNanos || Thread.currentThread().isInterrupted()) {
          throw e;
        }
        LockSupport.parkNanos(Duration.ofMillis(
            pause + ThreadLocalRandom.current().nextLong(pause)).toNanos());
        pause = Math.min(pause * 2, LONGEST_PAUSE_MILLIS);
      }
    }
  }

  @Override
  public SQLException passingCause(Throwable failure) {
    return SqliteErrors.busyCause(failure);
  }

  @Override
  public OutboxStorageException onStatement(String action, SQLException e) {
    return SqliteErrors.onStatement(file, action, e);
  }

  /**
   * Gives pages freed by deleted rows back to the file system (the file shrinks at the next
   * checkpoint), in one transaction.
   */
  @Override
  public void reclaimSpace() {
    if (readOnly) {
      return;
    }
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      long free;
      try (ResultSet rs = s.executeQuery("PRAGMA freelist_count")) {
        free = rs.next() ? rs.getLong(1) : 0;
      }
      if (free == 0) {
        return;
      }
      c.setAutoCommit(false);
      try {
        // each step of the pragma gives back one page, and a JDBC execute is one step
        // (left unfinished, it keeps the transaction from committing: closed at once)
        for (long page = 0; page < free; page++) {
          try (Statement step = c.createStatement()) {
            step.execute("PRAGMA incremental_vacuum");
          }
        }
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw onStatement("giving free pages back", e);
    }
  }

  /**
   * Writes the {@code -wal} into the file and cuts it to nothing, then gives free pages back:
   * what an idle application can call to leave the smallest files. Others' reads and writes wait
   * for it (or it returns having done less, when they keep the write-ahead log busy).
   *
   * @return bytes the database file and its {@code -wal} shrank by together
   */
  @Override
  public long compactFile() {
    if (readOnly) {
      return 0;
    }
    long before = SqliteFile.sizeWithLog(file);
    reclaimSpace();
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (SQLException e) {
      throw onStatement("compacting", e);
    }
    return Math.max(0, before - SqliteFile.sizeWithLog(file));
  }

  /**
   * Runs what stores registered ({@link #beforeClose}), then closes the pool. The last connection
   * to close writes the {@code -wal} into the file and removes it. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Runnable action : beforeClose) {
      action.run();
    }
    pool.close();
  }

  @Override
  public String toString() {
    return "SqliteDatabase[" + file + ", " + durability + "]";
  }

  /** Configures a {@link SqliteDatabase}; each setter validates and names its argument. */
  public static final class Builder {
    private Path file;
    private Durability durability = Durability.PROCESS_CRASH_SAFE;
    private boolean readOnly;
    private boolean createIfMissing = true;
    private Duration busyTimeout = DEFAULT_BUSY_TIMEOUT;
    private int maxPoolSize = DEFAULT_MAX_POOL_SIZE;
    private long quickCheckLimit = QUICK_CHECK_LIMIT;

    private Builder() {}

    /**
     * The database file: its base path ({@code data/app}, which names {@code data/app.sqlite}) or
     * the file itself ({@code data/app.sqlite}). Required.
     */
    public Builder file(Path file) {
      this.file = SqliteFile.dataFile(Objects.requireNonNull(file, "file == null"));
      return this;
    }

    /**
     * Default {@link Durability#PROCESS_CRASH_SAFE} ({@code synchronous=NORMAL});
     * {@link Durability#POWER_LOSS_SAFE} is {@code synchronous=FULL}, an fsync per commit.
     */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability == null");
      return this;
    }

    /**
     * Opens an existing file for reading only: nothing is created, migrated or written to it.
     * Other processes may keep writing meanwhile. Stores must be opened with their {@code
     * openExisting} method. Default false.
     */
    public Builder readOnly(boolean readOnly) {
      this.readOnly = readOnly;
      return this;
    }

    /** Whether a missing file is created. Default true; tools that only read say false. */
    public Builder createIfMissing(boolean createIfMissing) {
      this.createIfMissing = createIfMissing;
      return this;
    }

    /**
     * How long a statement waits for another connection's write lock, in this process or
     * another, before it fails as retryable. Default {@link #DEFAULT_BUSY_TIMEOUT}.
     */
    public Builder busyTimeout(Duration busyTimeout) {
      this.busyTimeout = Arguments.notNegative("busyTimeout", busyTimeout);
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

    /**
     * Files up to this many bytes are read whole with {@code PRAGMA quick_check} before the
     * library writes to them, so that a damaged one is refused with its bytes unchanged; a larger
     * file is opened without it, and damage in a page is found when SQLite reads that page (as a
     * non-retryable {@link OutboxStorageException}), possibly after the library wrote to other
     * pages. The check's time grows with the file (see {@link #QUICK_CHECK_LIMIT}); 0 turns it
     * off. Default {@link #QUICK_CHECK_LIMIT}.
     *
     * @throws IllegalArgumentException when it is negative
     */
    public Builder quickCheckLimit(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("quickCheckLimit < 0: " + bytes);
      }
      this.quickCheckLimit = bytes;
      return this;
    }

    /**
     * Opens the database.
     *
     * @throws IllegalStateException when no file was set
     * @throws OutboxStorageException when the file is refused (see the class comment) or cannot
     *     be opened
     */
    public SqliteDatabase build() {
      if (file == null) {
        throw new IllegalStateException("file is required");
      }
      return new SqliteDatabase(this);
    }
  }
}
