package dev.outboxreplay.examples.cli;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The {@code --db} and {@code --wait} options of the subcommands that work on an outbox file that
 * must exist.
 */
final class ExistingOutboxFile {
  /** The {@code --wait} option's text: shared with {@code enqueue}, which has its own. */
  static final String WAIT_DESCRIPTION = "How long to keep trying while another process holds "
      + "the file without serving it or is opening it, e.g. 500ms, 10s (default 10s).";

  @Option(names = "--db", required = true, description = "Outbox database file.")
  Path db;

  @Option(names = "--wait", defaultValue = "10s", description = WAIT_DESCRIPTION)
  String wait;

  /**
   * Opens the file for reading only (status, list, export): nothing is created, migrated or
   * written. Exit code 2 when it is missing, unreadable, damaged or holds no outbox.
   */
  Opened openReadOnly() {
    return open(db, true, ReplayCommand.parseDuration(wait));
  }

  /**
   * Opens the file for writing (replay, requeue), after a read-only look that it holds an outbox,
   * so that a file that does not (another application's) is refused without a byte written.
   */
  Opened openForWriting() {
    return openExistingForWriting(db, ReplayCommand.parseDuration(wait));
  }

  /**
   * Opens an existing outbox file at {@code db} for writing, after the same read-only look; each
   * open keeps trying for up to {@code wait} while another process holds the file.
   */
  static Opened openExistingForWriting(Path db, Duration wait) {
    open(db, true, wait).close();
    return open(db, false, wait);
  }

  private static Opened open(Path db, boolean readOnly, Duration wait) {
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
      database = H2Database.builder().file(db).createIfMissing(false).readOnly(readOnly)
          .openWait(wait).build();
    } catch (OutboxStorageException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
    }
    try {
      return new Opened(database, H2OutboxStore.openExisting(database));
    } catch (OutboxStorageException e) {
      database.close();
      throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
    }
  }

  /** An open outbox file and its store; closing closes the file. */
  record Opened(H2Database database, H2OutboxStore store) implements AutoCloseable {
    @Override
    public void close() {
      database.close();
    }
  }
}
