package dev.outboxreplay.examples.cli;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.time.Instant;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code outbox requeue}: operator action putting a conflict or rejected command back. Refused
 * (exit 6) when a later command of the same entity is already acked, since the requeued one would
 * then reach the receiver after it; {@code --force} requeues anyway.
 */
@Command(name = "requeue", mixinStandardHelpOptions = true,
    description = "Put a conflict or rejected command back to queued (audited; same key).")
final class RequeueCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--id", required = true, description = "Command id.")
  String id;

  @Option(names = "--force", description = "Requeue even when a later command of the same "
      + "entity is already acked (the receiver then gets them out of order).")
  boolean force;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      CommandId commandId;
      try {
        commandId = CommandId.parse(id);
      } catch (IllegalArgumentException e) {
        throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
      }
      try (ExistingOutboxFile.Opened opened = outboxFile.openForWriting()) {
        JdbcOutboxStore store = opened.store();
        OutboxRecord requeued;
        try {
          Optional<OutboxRecord> later = store.firstAckedAfter(commandId);
          if (later.isPresent() && !force) {
            throw new Cli.Failure(Cli.REFUSED_UNLESS_FORCED, "not requeued: command "
                + later.get().commandId() + " of the same entity '" + later.get().entityKey()
                + "' was accepted later and is already acked, so " + commandId + " would reach "
                + "the receiver after it; use --force to requeue anyway");
          }
          requeued = store.requeue(commandId, Instant.now());
        } catch (NoSuchElementException | IllegalStateException e) {
          throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage());
        }
        spec.commandLine().getOut().println(Cli.json(requeued));
        spec.commandLine().getOut().flush();
        return Cli.OK;
      }
    });
  }
}
