package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxreplay.IdempotencyConflictException;
import dev.outboxreplay.InvalidCommandException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code outbox enqueue}: accepts one command, or a JSON-lines file of them atomically. */
@Command(name = "enqueue", mixinStandardHelpOptions = true,
    description = "Accept commands into an outbox file; prints one JSON line per command.")
final class EnqueueCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--db", required = true,
      description = "Outbox database file (created if missing).")
  Path db;

  @Option(names = "--operation", description = "Operation, e.g. note.put.")
  String operation;

  @Option(names = "--entity", description = "Entity key (ordering group).")
  String entity;

  @Option(names = "--payload", description = "JSON payload.")
  String payload;

  @Option(names = "--from",
      description = "JSON lines: {\"operation\":..., \"entity\":..., \"payload\":{...}}")
  Path from;

  @Option(names = "--accept-valid-prefix", description = "With --from: on a bad line, still "
      + "accept the lines before it (default: accept nothing).")
  boolean acceptValidPrefix;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      List<OutboxCommand> commands = from != null ? readLines() : List.of(single());
      try (H2Database database = H2Database.open(db)) {
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(database)).build();
        List<OutboxRecord> accepted;
        try {
          accepted = outbox.acceptAll(commands);
        } catch (InvalidCommandException | IdempotencyConflictException e) {
          throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage() + "; nothing was accepted");
        }
        PrintWriter out = spec.commandLine().getOut();
        for (OutboxRecord r : accepted) {
          out.println(Cli.JSON.createObjectNode().put("commandId", r.commandId().toString())
              .put("idempotencyKey", r.idempotencyKey().value()).put("operation", r.operation())
              .put("entity", r.entityKey()));
        }
        out.flush();
        return Cli.OK;
      }
    });
  }

  private OutboxCommand single() {
    if (operation == null || entity == null || payload == null) {
      throw new Cli.Failure(Cli.BAD_INPUT,
          "give --operation, --entity and --payload, or --from FILE.jsonl");
    }
    return OutboxCommand.ofJson(operation, entity, payload);
  }

  private List<OutboxCommand> readLines() throws IOException {
    if (!Files.isReadable(from)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read " + from);
    }
    List<OutboxCommand> commands = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(from, StandardCharsets.UTF_8)) {
      int lineNumber = 0;
      for (String line; (line = in.readLine()) != null; ) {
        lineNumber++;
        if (line.isBlank()) {
          continue;
        }
        String problem = null;
        OutboxCommand command = null;
        try {
          JsonNode node = Cli.JSON.readTree(line);
          if (!node.path("operation").isTextual() || !node.path("entity").isTextual()
              || node.path("payload").isMissingNode()) {
            problem = "needs \"operation\" and \"entity\" strings and a \"payload\"";
          } else {
            command = OutboxCommand.ofJson(node.get("operation").asText(),
                node.get("entity").asText(), Cli.JSON.writeValueAsString(node.get("payload")));
          }
        } catch (IOException e) {
          problem = "is not JSON (" + e.getMessage().lines().findFirst().orElse("") + ")";
        }
        if (problem != null) {
          if (acceptValidPrefix && !commands.isEmpty()) {
            spec.commandLine().getErr().println("outbox enqueue: " + from + " line "
                + lineNumber + " " + problem + "; accepting the " + commands.size()
                + " line(s) before it");
            spec.commandLine().getErr().flush();
            return commands;
          }
          throw new Cli.Failure(Cli.BAD_INPUT, from + " line " + lineNumber + " " + problem
              + "; nothing was accepted");
        }
        commands.add(command);
      }
    }
    if (commands.isEmpty()) {
      throw new Cli.Failure(Cli.BAD_INPUT, from + " holds no commands");
    }
    return commands;
  }
}
