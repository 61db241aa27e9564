package dev.outboxreplay.examples.cli;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.H2Database;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --db} option of the subcommands that work on an outbox file that must exist. */
final class ExistingOutboxFile {
  @Option(names = "--db", required = true, description = "Outbox database file.")
  Path db;

  /** Opens the file; never creates one. Exit code 2 when it is missing or unreadable. */
  H2Database open() {
    Path file = db.getFileName().toString().endsWith(".mv.db") ? db
        : db.resolveSibling(db.getFileName() + ".mv.db");
    if (!Files.exists(file)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "no outbox database at " + file);
    }
    if (!Files.isReadable(file)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read " + file);
    }
    try {
      return H2Database.builder().file(db).createIfMissing(false).build();
    } catch (OutboxStorageException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
    }
  }
}
