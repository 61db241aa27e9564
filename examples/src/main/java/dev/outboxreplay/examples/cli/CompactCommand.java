package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.ReplayerBuilder;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code outbox compact}: applies the history retention now, as a replayer does once an hour:
 * ended commands older than {@code --tombstone-after} become tombstones, tombstones older than
 * {@code --delete-after} are deleted with their audit entries; then the file is compacted (up
 * to {@code H2Database.COMPACTION_BUDGET}, and once more as it closes), reusing only space freed
 * more than H2's retention time (45 s) before: what this command deletes is given back by a
 * later compaction. Prints one JSON line: the counts and the file's size before and after.
 */
@Command(name = "compact", mixinStandardHelpOptions = true,
    description = "Apply the history retention now: tombstone ended commands, delete old "
        + "tombstones (docs/table-layout.md).")
final class CompactCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--tombstone-after", defaultValue = "1d", converter = Cli.DurationConverter.class,
      description = "Commands that ended "
      + "longer ago than this keep only their id, key, hash and outcome "
      + "(default: ${DEFAULT-VALUE}).")
  Duration tombstoneAfter;

  @Option(names = "--delete-after", converter = Cli.DurationConverter.class, description = "Tombstones of commands that ended longer ago "
      + "than this are deleted (default: the key retention plus 1d).")
  Duration deleteAfter;

  @Option(names = "--key-retention", defaultValue = "7d", converter = Cli.DurationConverter.class,
      description = "How long the receiver "
      + "remembers an idempotency key; --delete-after may not be shorter (default: "
      + "${DEFAULT-VALUE}).")
  Duration keyRetention;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      Duration tombstone = tombstoneAfter;
      Duration retention = Cli.positive("--key-retention", keyRetention);
      Duration delete;
      try {
        delete = ReplayerBuilder.tombstoneDeletionAge(
            deleteAfter, tombstone,
            retention);
      } catch (IllegalArgumentException e) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--delete-after, --key-retention, "
            + "--tombstone-after: " + e.getMessage());
      }
      ObjectNode result = Cli.JSON.createObjectNode();
      java.nio.file.Path file;
      try (ExistingOutboxFile.Opened opened = outboxFile.openForWriting()) {
        JdbcOutboxStore store = opened.store();
        file = opened.database().file();
        result.put("fileBytesBefore", java.nio.file.Files.size(file));
        Instant now = Instant.now();
        result.put("tombstoned", store.tombstoneEnded(now.minus(tombstone), now))
            .put("deleted", store.deleteTombstones(now.minus(delete)));
        opened.database().compactFile();
      }
      result.put("fileBytesAfter", java.nio.file.Files.size(file));
      spec.commandLine().getOut().println(result);
      spec.commandLine().getOut().flush();
      return Cli.OK;
    });
  }
}
