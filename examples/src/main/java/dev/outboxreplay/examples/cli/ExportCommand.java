package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2OutboxStore;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code outbox export}: every command as a JSON line, with its audit trail. */
@Command(name = "export", mixinStandardHelpOptions = true,
    description = "Write every command as one JSON line, with its audit trail.")
final class ExportCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      try (ExistingOutboxFile.Opened opened = outboxFile.openReadOnly()) {
        H2OutboxStore store = opened.store();
        PrintWriter out = spec.commandLine().getOut();
        for (Status status : Status.values()) {
          for (OutboxRecord r : store.list(status, Integer.MAX_VALUE)) {
            ObjectNode line = Cli.json(r);
            ArrayNode audit = line.putArray("audit");
            for (OutboxStore.AuditEntry e : store.auditTrail(r.commandId())) {
              audit.addObject().put("from", e.from() == null ? null : e.from().wireName())
                  .put("to", e.to().wireName()).put("token", e.fencingToken())
                  .put("reason", e.reason().wireName()).put("at", e.at().toString());
            }
            out.println(line);
          }
        }
        out.flush();
        return Cli.OK;
      }
    });
  }
}
