package dev.outboxreplay.examples.cli;

import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code outbox list}: the commands in one status, in accept order. */
@Command(name = "list", mixinStandardHelpOptions = true,
    description = "List the commands in one status, oldest first.")
final class ListCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--status", required = true,
      description = "queued, claimed, sending, retryable_failed, unknown, acked, conflict, "
          + "rejected")
  String status;

  @Option(names = "--limit", defaultValue = "1000",
      description = "At most this many (default 1000).")
  int limit;

  @Option(names = "--json", description = "JSON lines instead of a table.")
  boolean json;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      Status wanted = Cli.status(status);
      if (limit < 1) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--limit must be at least 1: " + limit);
      }
      try (ExistingOutboxFile.Opened opened = outboxFile.openReadOnly()) {
        PrintWriter out = spec.commandLine().getOut();
        JdbcOutboxStore store = opened.store();
        List<OutboxRecord> rows = Cli.unfinished(spec, opened) ? List.of()
            : store.list(wanted, limit);
        for (OutboxRecord r : rows) {
          List<OutboxStore.AuditEntry> trail = store.auditTrail(r.commandId());
          String reason = trail.isEmpty() ? "accepted"
              : trail.get(trail.size() - 1).reason().wireName();
          if (json) {
            out.println(Cli.json(r).put("reason", reason));
          } else {
            out.printf("%s  %-16s %-20s attempt %d  %-26s %s%n", r.commandId(),
                r.status().wireName(), r.entityKey(), r.attempt(), reason,
                r.lastError() == null ? "" : r.lastError().code());
          }
        }
        out.flush();
        return Cli.OK;
      }
    });
  }
}
