package dev.outboxreplay.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.examples.cli.OutboxTool;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import picocli.CommandLine;

/** One in-process run of the {@code outbox} tool: its exit code, standard output and error. */
record ToolRun(int exit, String out, String err) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Runs the tool with {@code args} in this JVM. */
  static ToolRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new OutboxTool());
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(args);
    return new ToolRun(exit, out.toString(), err.toString());
  }

  List<String> lines() {
    return out.lines().toList();
  }

  JsonNode lastJson() throws Exception {
    List<String> lines = lines();
    return JSON.readTree(lines.get(lines.size() - 1));
  }
}
