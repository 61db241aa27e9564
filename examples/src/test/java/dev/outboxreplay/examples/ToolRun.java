package dev.outboxreplay.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.examples.cli.OutboxTool;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.util.List;
import picocli.CommandLine;

/** One in-process run of the {@code outbox} tool: its exit code, standard output and error. */
record ToolRun(int exit, String out, String err) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Runs the tool with {@code args} in this JVM. */
  static ToolRun of(String... args) {
    StringWriter out = new StringWriter();
    return run(new PrintWriter(out), out, args);
  }

  /**
   * Runs the tool with {@code args} in this JVM, its standard output failing after {@code
   * bytes} characters as a full disk fails a write ({@code out} is what got through).
   */
  static ToolRun withOutputFailingAfter(int bytes, String... args) {
    StringWriter out = new StringWriter();
    Writer failing = new Writer() {
      private int written;

      @Override
      public void write(char[] chars, int offset, int length) throws IOException {
        if (written + length > bytes) {
          throw new IOException("No space left on device");
        }
        written += length;
        out.write(chars, offset, length);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    return run(new PrintWriter(failing), out, args);
  }

  private static ToolRun run(PrintWriter stdout, StringWriter out, String... args) {
    StringWriter err = new StringWriter();
    CommandLine cli = OutboxTool.commandLine();
    cli.setOut(stdout);
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
