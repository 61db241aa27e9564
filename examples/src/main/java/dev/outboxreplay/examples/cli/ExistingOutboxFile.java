package dev.outboxreplay.examples.cli;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
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

  @Option(names = "--db", required = true, description = "Outbox database file.")
  Path db;

  @Option(names = "--wait", defaultValue = "10s", description = WAIT_DESCRIPTION,
      converter = Cli.DurationConverter.class)
  Duration wait;

  /** The {@code --key-file} option's text: shared with {@code enqueue}. */
  static final String KEY_FILE_DESCRIPTION = "For an encrypted file: a file whose first line is "
      + "its encryption key, as the application passes it to H2Database.Builder.encryptionKey "
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
   * file is opened with {@code key} (null: a plain file).
   */
  static Opened openExistingForWriting(Path db, Duration wait, char[] key) {
    open(db, true, wait, key).close();
    return open(db, false, wait, key);
  }

  /**
   * The file's outbox: read-only, null when the file's creation never finished ({@link
   * H2OutboxStore.Layout#UNFINISHED}: it holds no command, and the caller reads it as an empty
   * outbox); for writing, the store (an unfinished file is finished, an older layout upgraded).
   */
  private static H2OutboxStore outboxOf(H2Database database) {
    if (database.readOnly()
        && H2OutboxStore.layout(database) == H2OutboxStore.Layout.UNFINISHED) {
      return null;
    }
    return H2OutboxStore.openExisting(database);
  }

  /**
   * A builder for {@code db}, encrypted with {@code key} when it is not null (the builder keeps a
   * copy). Exit code 2 for a key H2 cannot take; the message never quotes it.
   */
  static H2Database.Builder builder(Path db, char[] key) {
    H2Database.Builder builder = H2Database.builder().file(db);
    if (key == null) {
      return builder;
    }
    try {
      return builder.encryptionKey(key);
    } catch (IllegalArgumentException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--key-file: the key holds whitespace; H2 takes a key "
          + "without spaces");
    }
  }

  private static Opened open(Path db, boolean readOnly, Duration wait, char[] key) {
    Path file = db.getFileName().toString().endsWith(".mv.db") ? db
        : db.resolveSibling(db.getFileName() + ".mv.db");
    if (!Files.exists(file)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "no outbox database at " + file);
    }
    if (!Files.isReadable(file)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read " + file);
    }
    H2Database database;
    try {
      database = builder(db, key).createIfMissing(false).readOnly(readOnly)
          .openWait(wait).build();
    } catch (OutboxStorageException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage().replace(
          "open it with its encryption key", "open it with its encryption key (--key-file FILE)"));
    }
    try {
      return new Opened(database, outboxOf(database));
    } catch (OutboxStorageException e) {
      database.close();
      throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
    }
  }

  /**
   * An open outbox file and its store; closing closes the file.
   *
   * @param store the outbox; null for a file opened read-only whose creation never finished,
   *     which holds no command ({@link #unfinished()})
   */
  record Opened(H2Database database, H2OutboxStore store) implements AutoCloseable {
    /** True for a file whose creation never finished: it reads as an empty outbox. */
    boolean unfinished() {
      return store == null;
    }

    @Override
    public void close() {
      database.close();
    }
  }
}
