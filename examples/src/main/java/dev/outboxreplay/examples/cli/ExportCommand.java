package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.OutboxStore;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code outbox export}: every command as a JSON line, with its audit trail, in accept order and
 * as of one moment (a replay running meanwhile changes nothing of it).
 */
@Command(name = "export", mixinStandardHelpOptions = true,
    description = "Write every command as one JSON line, with its audit trail.")
final class ExportCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      try (ExistingOutboxFile.Opened opened = outboxFile.openReadOnly()) {
        PrintWriter out = spec.commandLine().getOut();
        if (Cli.unfinished(spec, opened)) {
          return Cli.OK;
        }
        opened.store().export(exported -> {
          ObjectNode line = Cli.json(exported.command());
          ArrayNode audit = line.putArray("audit");
          for (OutboxStore.AuditEntry e : exported.audit()) {
            audit.addObject().put("from", e.from() == null ? null : e.from().wireName())
                .put("to", e.to().wireName()).put("token", e.fencingToken())
                .put("reason", e.reason().wireName()).put("at", e.at().toString());
          }
          out.println(line);
        });
        out.flush();
        return Cli.OK;
      }
    });
  }
}
