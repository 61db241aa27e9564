package dev.outboxreplay.h2.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@code H2Database} opens its pool: the JDBC URL with the settings the outbox relies on, and
 * the HikariCP configuration around a {@link RetryingOpenDataSource}; and the check of an
 * application's own data source.
 *
 * @param file the base path of the database file (without {@code .mv.db})
 * @param encryptionKey the file encryption password, or null; not copied
 */
public record PoolOpener(Path file, boolean multiProcess, boolean createIfMissing,
    boolean readOnly, char[] encryptionKey, int maxPoolSize, Duration lockTimeout,
    Duration openWait) {
  private static final Logger LOG = LoggerFactory.getLogger(PoolOpener.class);

  private Path dataFile() {
    return H2File.dataFileOf(file);
  }

  /**
   * What {@link #checkApplicationDataSource} found.
   *
   * @param file the base path of the database file
   * @param warnings what it logged as warnings, in order
   */
  public record ApplicationDataSourceCheck(Path file, List<String> warnings) {}

  /**
   * Checks that an application's data source reaches an H2 file database whose commits are durable
   * on return ({@code WRITE_DELAY} 0), and logs a warning when H2 compacts that file while closing
   * it ({@code MAX_COMPACT_TIME} other than 0).
   *
   * @throws OutboxStorageException when the data source reaches no H2 file database, or one whose
   *     commits are not durable on return and {@code allowWriteDelay} is false
   */
  public static ApplicationDataSourceCheck checkApplicationDataSource(DataSource dataSource,
      boolean allowWriteDelay) {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT DATABASE_PATH(), (SELECT "
            + "MAX(CAST(SETTING_VALUE AS INT)) FROM INFORMATION_SCHEMA.SETTINGS "
            + "WHERE SETTING_NAME = 'WRITE_DELAY'), (SELECT MAX(CAST(SETTING_VALUE AS INT)) "
            + "FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'MAX_COMPACT_TIME')")) {
      rs.next();
      String path = rs.getString(1);
      int writeDelay = rs.getInt(2);
      int maxCompactTime = rs.getInt(3);
      if (path == null) {
        throw new OutboxStorageException("the application's data source reaches an in-memory H2 "
            + "database: the outbox needs a file database (jdbc:h2:file:...)");
      }
      if (writeDelay != 0 && !allowWriteDelay) {
        throw new OutboxStorageException("the application's data source for " + path
            + ".mv.db has WRITE_DELAY " + writeDelay + " ms: a command accepted in the last "
            + writeDelay + " ms would be lost when the process is killed; add ;WRITE_DELAY=0 to "
            + "its JDBC URL, or call allowWriteDelay(true) to accept that");
      }
      List<String> warnings = new ArrayList<>();
      if (maxCompactTime != 0) {
        warnings.add("the application's data source for " + path + ".mv.db has MAX_COMPACT_TIME "
            + maxCompactTime + " ms: H2 compacts the file at retention time 0 when it closes it, "
            + "which left files that H2 then opened at an older version (docs/h2-file-handling.md, "
            + "\"A clean close that H2 compacts\"); add ;MAX_COMPACT_TIME=0 to its JDBC URL");
      }
      for (String warning : warnings) {
        LOG.warn(warning);
      }
      return new ApplicationDataSourceCheck(Path.of(path).toAbsolutePath().normalize(),
          List.copyOf(warnings));
    } catch (SQLException e) {
      throw new OutboxStorageException("the application's data source is not a usable H2 "
          + "database: " + e.getMessage(), e);
    }
  }

  /**
   * Opens the pool. Its data source ({@link RetryingOpenDataSource}) already opens again for up
   * to the open wait while other processes open or take over the same file. A pool whose first
   * connection the serving process closed after that data source handed it over (between its
   * round trip and the pool's own first statements) is opened anew, while less than the open
   * wait has passed since this call began.
   *
   * @throws OutboxStorageException when the pool cannot be opened
   */
  public HikariDataSource open(boolean readOnlyFile) {
    return openAgainAfterHandover(() -> new HikariDataSource(poolConfig(readOnlyFile)),
        openWait, dataFile(), Handover.Pacing.SYSTEM);
  }

  /**
   * Opens the pool for reading only, never as the file's writer: a file no live process holds is
   * opened read-only ({@link #readOnlyUrl}: a lock left by a process that is gone is read past);
   * a file a live process serves is read through that process's server, by its loopback address
   * and key from the lock file, so that this process can never end up opening the file itself
   * (H2's multi-process URL would, were the owner to die in between). A lock that appears or
   * goes away in between is looked at again, with the handover's pauses, for up to the open wait.
   *
   * @throws OutboxStorageException when a live owner does not serve the file (it opened it in
   *     single-process mode) for the whole open wait, or the file cannot be read
   */
  public HikariDataSource openReadOnly() {
    Path dataFile = dataFile();
    try {
      return Handover.retryWithin(() -> {
        LockOwner.Found owner = LockOwner.of(dataFile);
        try {
          if (owner.state() != LockOwner.State.HELD) {
            return new HikariDataSource(poolConfig(readOnlyUrl(), false));
          }
          if (owner.server() != null) {
            return new HikariDataSource(poolConfig(serverUrl(owner.server()), false));
          }
        } catch (RuntimeException e) {
          if (!H2Errors.isLockedByAnother(e) && Handover.handoverCause(e) == null) {
            throw e;
          }
        }
        throw new LockMoved(owner.description());
      }, openWait, Handover.Pacing.SYSTEM);
    } catch (SQLException | RuntimeException e) {
      throw H2Errors.onOpen(dataFile, e instanceof LockMoved
          ? new SQLException(e.getMessage(), "HY000", 90020) : e);
    }
  }

  /** The owner changed between the look at its lock and the open: look again. */
  private static final class LockMoved extends SQLTransientConnectionException {
    LockMoved(String owner) {
      super("Database may be already in use: " + owner);
    }
  }

  /**
   * Runs {@code openPool} and returns its pool, through {@link Handover#retryWithin}: when it
   * fails because the process serving the file closed or died under the pool's first connection
   * ({@link Handover#handoverCause}), it runs again while less than {@code openWait} has passed
   * since this call began. Any other failure, or one after that, is thrown as an {@link
   * OutboxStorageException} naming {@code dataFile}.
   *
   * <p>Seen in {@code InboxCrashTest}: a process connected through another's server, the round
   * trip of {@link RetryingOpenDataSource} succeeded, and then that server's {@code SHUTDOWN}
   * failed the pool's own first statement ("The database is open in exclusive mode", 90135),
   * which HikariCP turns into a failed pool.
   */
  static HikariDataSource openAgainAfterHandover(Supplier<HikariDataSource> openPool,
      Duration openWait, Path dataFile, Handover.Pacing pacing) {
    try {
      return Handover.retryWithin(() -> {
        try {
          return openPool.get();
        } catch (RuntimeException e) {
          if (Handover.handoverCause(e) == null) {
            throw e;
          }
          throw new ServerWentAway(e);
        }
      }, openWait, pacing);
    } catch (ServerWentAway e) {
      throw H2Errors.onOpen(dataFile, e.getCause());
    } catch (SQLException | RuntimeException e) {
      throw H2Errors.onOpen(dataFile, e);
    }
  }

  /** HikariCP's failure to open a pool, as the handover {@link Handover#retryWithin} retries. */
  private static final class ServerWentAway extends SQLTransientConnectionException {
    ServerWentAway(RuntimeException poolFailure) {
      super(poolFailure.getMessage(), poolFailure);
    }
  }

  private HikariConfig poolConfig(boolean readOnlyFile) {
    return poolConfig(readOnlyFile ? readOnlyUrl() : jdbcUrl(), multiProcess && !readOnlyFile);
  }

  private HikariConfig poolConfig(String url, boolean shared) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("outbox-h2:" + file.getFileName());
    // opening retries H2's lock-file races at a short pace, not at the pool's growing back-off
    config.setDataSource(new RetryingOpenDataSource(url, encryptionKey, shared, openWait));
    config.setReadOnly(readOnly);
    config.setMinimumIdle(1);
    config.setMaximumPoolSize(maxPoolSize);
    config.setInitializationFailTimeout(1);
    config.setConnectionTimeout(Math.max(250, lockTimeout.toMillis() * 2));
    // a connection to a database that went away (handover) is dropped, never handed out again
    config.setExceptionOverride(new EvictBrokenConnections());  // an instance: no reflection
    return config;
  }

  /**
   * A file no other process has open, opened for reading only: H2 writes nothing to it and creates
   * no lock file (and so serves it to no one: other processes cannot open it meanwhile). A lock
   * file whose owner runs makes the open fail with 90020; one whose owner is gone does not.
   */
  private String readOnlyUrl() {
    // through ReadOnlyFileSystem: a lock file left by a process that is gone stops no reader
    ReadOnlyFileSystem.register();
    return "jdbc:h2:" + ReadOnlyFileSystem.SCHEME + ":" + file
        + ";ACCESS_MODE_DATA=r;TRACE_LEVEL_FILE=0;IFEXISTS=TRUE"
        + (encryptionKey != null ? ";CIPHER=AES" : "");
  }

  /**
   * The file through the server of the process that holds it: {@code server} is H2's remote name
   * {@code host:port/key} from the lock file, on loopback. Never opens the file here.
   */
  private String serverUrl(String server) {
    return "jdbc:h2:tcp://" + server + ";TRACE_LEVEL_FILE=0"
        + (encryptionKey != null ? ";CIPHER=AES" : "");
  }

  private String jdbcUrl() {
    RecoveringFileSystem.register();
    // through RecoveringFileSystem: the header repair runs again under H2's own lock when H2
    // itself takes the file over inside getConnection (an encrypted file with the key
    // H2File.openedHere keeps), and a failed open's writes are journaled (OpenJournal)
    StringBuilder url = new StringBuilder("jdbc:h2:")
        .append(RecoveringFileSystem.SCHEME).append(':')
        .append(file)
        .append(";WRITE_DELAY=0")
        // no compaction inside H2's close: H2 runs it at retention time 0 whatever the
        // database's setting, and files it closed so after a kill were refused at their next
        // open (docs/h2-file-handling.md, "A clean close that H2 compacts"); the library compacts
        // before it closes instead, at the database's retention (CompactionSchedule.close)
        .append(";MAX_COMPACT_TIME=0")
        // no .trace.db: it is created with the umask and may quote statements and values
        .append(";TRACE_LEVEL_FILE=0")
        .append(";LOCK_TIMEOUT=").append(lockTimeout.toMillis());
    if (multiProcess) {
      // SOCKET: after the owner is killed, the next opener sees the lock as stale as soon as the
      // owner's lock socket refuses it (about 1.5 s here), instead of waiting out the lock
      // file's heartbeat (about 3.6 s).
      url.append(";AUTO_SERVER=TRUE;FILE_LOCK=SOCKET");
    }
    if (!createIfMissing) {
      url.append(";IFEXISTS=TRUE");
    }
    if (encryptionKey != null) {
      url.append(";CIPHER=AES");
    }
    return url.toString();
  }
}
