package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.examples.cli.OutboxTool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ExamplesTest {
  @TempDir Path dir;

  private String captureStdout(ThrowingRunnable body) throws Exception {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      body.run();
    } finally {
      System.setOut(original);
    }
    return captured.toString(StandardCharsets.UTF_8);
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void quickStartQueuesOneCommandPerRunAndKeepsThem() throws Exception {
    String db = dir.resolve("app").toString();
    String first = captureStdout(() -> QuickStart.main(new String[] {db}));
    assertThat(first).contains("queued ").contains("key note.put:note-1:")
        .contains("payload {\"body\":\"buy milk\",\"id\":\"note-1\"}")
        .contains("queued=1");
    String second = captureStdout(() -> QuickStart.main(new String[] {db}));
    assertThat(second).contains("queued=2");
  }

  @Test
  void demoPassesEveryCheckAndExitsZero() throws Exception {
    java.io.StringWriter out = new java.io.StringWriter();
    CommandLine cli = OutboxTool.commandLine();
    cli.setOut(new java.io.PrintWriter(out));
    int exit = cli.execute("demo", "--dir", dir.resolve("demo").toString(), "--commands", "120");
    String output = out.toString();
    assertThat(output).contains("all checks passed").doesNotContain("FAIL");
    assertThat(output).contains("killed with").contains("server business effects");
    assertThat(exit).as(output).isZero();
  }
}
