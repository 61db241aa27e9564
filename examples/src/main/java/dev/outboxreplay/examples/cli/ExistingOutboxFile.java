package dev.outboxreplay.examples.cli;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Function;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The {@code --db}, {@code --wait} and {@code --key-file} options of the subcommands that work on
 * an outbox file that must exist.
 */
final class ExistingOutboxFile {
  /** The {@code --wait} option's text: shared with {@code enqueue}, which has its own. */
  static final String WAIT_DESCRIPTION = "How long to keep trying while another process holds "
      + "the file without serving it or is opening it, e.g. 500ms, 10s (default 10s).";

  @Option(names = "--db", required = true, description = "Outbox database: the file (NAME.mv.db "
      + "for H2, NAME.sqlite for SQLite), or its base path NAME.")
  Path db;

  @Option(names = "--wait", defaultValue = "10s", description = WAIT_DESCRIPTION,
      converter = Cli.DurationConverter.class)
  Duration wait;

  /** The {@code --key-file} option's text: shared with {@code enqueue}. */
  static final String KEY_FILE_DESCRIPTION = "For an encrypted H2 file: a file whose first line "
      + "is its encryption key, as the application passes it to H2Database.Builder.encryptionKey "
      + "(kept out of the command line, where other local users could read it).";

  @Option(names = "--key-file", paramLabel = "FILE", description = KEY_FILE_DESCRIPTION)
  Path keyFile;

  /** The command this mixin belongs to: where warnings go. */
  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  /**
   * Opens the file for reading only (status, list, export): nothing is created, migrated or
   * written. Exit code 2 when it is missing, unreadable, damaged or holds no outbox.
   */
  Opened openReadOnly() {
    return withKey(key -> open(db, true, wait, key));
  }

  /**
   * Opens the file for writing (replay, requeue), after a read-only look that it holds an outbox,
   * so that a file that does not (another application's) is refused without a byte written.
   */
  Opened openForWriting() {
    return withKey(key -> openExistingForWriting(db, wait, key));
  }

  /**
   * Opens {@code file} for reading only, as {@link #openReadOnly()} opens {@code --db}, with
   * {@code --key-file}'s key: for a second file of the same engine and key (a backup's).
   */
  Opened openOtherReadOnly(Path file) {
    return withKey(key -> open(file, true, wait, key));
  }

  /** Runs {@code open} with the key of {@code --key-file} (null: none), wiped afterwards. */
  private Opened withKey(Function<char[], Opened> open) {
    char[] key = readKey(command, keyFile);
    try {
      return open.apply(key);
    } finally {
      wipe(key);
    }
  }

  /**
   * The encryption key in {@code keyFile}'s first line ({@link Cli#readSecret}), or null when no
   * key file is given (a plain file). The caller wipes it once the file is open.
   */
  static char[] readKey(CommandSpec command, Path keyFile) {
    return keyFile == null ? null : Cli.readSecret(command, "--key-file", keyFile).toCharArray();
  }

  /** Overwrites {@code key} (may be null). */
  static void wipe(char[] key) {
    if (key != null) {
      Arrays.fill(key, '\0');
    }
  }

  /**
   * Opens an existing outbox file at {@code db} for writing, after the same read-only look; each
   * open keeps trying for up to {@code wait} while another process holds the file. An encrypted
   * H2 file is opened with {@code key} (null: a plain file).
   */
  static Opened openExistingForWriting(Path db, Duration wait, char[] key) {
    open(db, true, wait, key).close();
    return open(db, false, wait, key);
  }

  /**
   * Opens a new file at {@code db} with {@code engine}, or the one already there (whatever its
   * engine), for writing, and creates or upgrades its outbox.
   */
  static Opened createOrOpen(Path db, OutboxEngine engine, Duration wait, char[] key) {
    Path file = OutboxEngine.fileOf(db, engine);
    if (Files.exists(file)) {
      return openExistingForWriting(file, wait, key);
    }
    OutboxEngine created = OutboxEngine.of(file);
    JdbcDatabase database = opened(() -> created.open(file, false, true, wait, key));
    try {
      return new Opened(database, JdbcOutboxStore.create(database), file, null);
    } catch (RuntimeException e) {
      database.close();
      throw e;
    }
  }

  /**
   * The file's outbox: read-only, null when the file's creation never finished ({@link
   * JdbcOutboxStore.Layout#UNFINISHED}: it holds no command, and the caller reads it as an empty
   * outbox); for writing, the store (an unfinished file is finished, an older layout upgraded).
   */
  private static JdbcOutboxStore outboxOf(OutboxEngine engine, JdbcDatabase database) {
    if (database.readOnly()
        && JdbcOutboxStore.layout(database) == JdbcOutboxStore.Layout.UNFINISHED) {
      return null;
    }
    return JdbcOutboxStore.openExisting(database);
  }

  private static Opened open(Path db, boolean readOnly, Duration wait, char[] key) {
    Path file = OutboxEngine.fileOf(db, OutboxEngine.H2);
    if (!Files.exists(file)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "no outbox database at " + file);
    }
    if (!Files.isReadable(file)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read " + file);
    }
    OutboxEngine engine = OutboxEngine.of(file);
    if (readOnly && engine == OutboxEngine.H2 && madeByAKilledFirstOpen(file)) {
      return new Opened(null, null, file, null); // holds no command; the next write starts it
    }
    Path copy = null;
    JdbcDatabase database;
    try {
      database = engine.open(file, readOnly, false, wait, key);
    } catch (OutboxStorageException e) {
      if (!readOnly || !needsWritingToOpen(e, file)) {
        throw failure(e);
      }
      // H2 cannot open this file without writing: its creator was stopped before its first
      // commit finished, and H2 must roll that back. Read what the next open for writing will
      // find, from a private copy that H2 recovers; the file itself is not written.
      copy = privateCopy(file);
      Path recovered = copy.resolve(file.getFileName());
      database = opened(() -> engine.open(recovered, false, false, wait, key));
    }
    try {
      JdbcOutboxStore store = copy != null
          && JdbcOutboxStore.layout(database) != JdbcOutboxStore.Layout.OUTBOX
          ? null // what its next open for writing finishes: no command
          : outboxOf(engine, database);
      return new Opened(database, store, file, copy);
    } catch (OutboxStorageException e) {
      new Opened(database, null, file, copy).close();
      throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
    }
  }

  /**
   * True for an empty H2 file with H2's lock file beside it: H2 made both and its creator was
   * stopped before H2 wrote a byte (a live creator that has not written yet holds no command
   * either). An empty file without a lock file is someone else's and is refused.
   */
  private static boolean madeByAKilledFirstOpen(Path file) {
    String name = file.getFileName().toString();
    if (!name.endsWith(".mv.db")) {
      return false;
    }
    Path lock = file.resolveSibling(name.substring(0, name.length() - ".mv.db".length())
        + ".lock.db");
    try {
      return Files.size(file) == 0 && Files.exists(lock);
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** The largest file read through a private copy: only a file never finished needs one. */
  private static final long LARGEST_COPY = 16L << 20;

  /**
   * True when H2 refused a read-only open of {@code file} because it would have to write to
   * open it (H2's error 90097), and the file is small enough to be one whose creation stopped.
   */
  private static boolean needsWritingToOpen(OutboxStorageException e, Path file) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.sql.SQLException sql && sql.getErrorCode() == 90097) {
        try {
          return Files.size(file) <= LARGEST_COPY;
        } catch (java.io.IOException unreadable) {
          return false;
        }
      }
    }
    return false;
  }

  /** A new owner-only folder holding a copy of {@code file}. */
  private static Path privateCopy(Path file) {
    try {
      Path dir = BackupFiles.privateFolder(null, "outbox-read");
      Files.copy(file, dir.resolve(file.getFileName()));
      return dir;
    } catch (java.io.IOException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read " + file + ": H2 must recover it "
          + "before it can be read, and a private copy to recover failed: " + e.getMessage());
    }
  }

  private static Cli.Failure failure(OutboxStorageException e) {
    return new Cli.Failure(Cli.BAD_INPUT, e.getMessage().replace(
        "open it with its encryption key", "open it with its encryption key (--key-file FILE)")
        + (e.retryable() ? " (this passes: run the command again)" : ""));
  }

  /** Runs an open; a refused file is exit code 2 with the library's message. */
  private static JdbcDatabase opened(java.util.function.Supplier<JdbcDatabase> open) {
    try {
      return open.get();
    } catch (OutboxStorageException e) {
      throw failure(e);
    }
  }

  /**
   * An open outbox file and its store; closing closes the file.
   *
   * @param database the open database: the file's, or its private copy's
   * @param store the outbox; null for a file opened read-only whose creation never finished,
   *     which holds no command ({@link #unfinished()})
   * @param file the database file
   * @param copy the private folder holding a recovered copy that {@code database} reads, deleted
   *     on close; null when {@code database} is the file's own
   */
  record Opened(JdbcDatabase database, JdbcOutboxStore store, Path file, Path copy)
      implements AutoCloseable {
    /** True for a file whose creation never finished: it reads as an empty outbox. */
    boolean unfinished() {
      return store == null;
    }

    @Override
    public void close() {
      if (Cli.memoryExhausted || database == null) {
        return; // memoryExhausted: the process halts without closing the file (see Cli)
      }
      try {
        database.close();
      } finally {
        if (copy != null) {
          BackupFiles.deleteFolder(copy);
        }
      }
    }
  }
}
