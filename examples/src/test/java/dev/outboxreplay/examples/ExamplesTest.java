package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.examples.cli.OutboxTool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void demoPassesEveryCheckAndExitsZeroOnEitherEngine(String engine) throws Exception {
    java.io.StringWriter out = new java.io.StringWriter();
    CommandLine cli = OutboxTool.commandLine();
    cli.setOut(new java.io.PrintWriter(out));
    Path demoDir = dir.resolve("demo-" + engine);
    int exit = cli.execute("demo", "--dir", demoDir.toString(), "--commands", "120",
        "--engine", engine);
    String output = out.toString();
    assertThat(output).contains("all checks passed").doesNotContain("FAIL")
        .contains("app files on " + engine);
    assertThat(output).contains("killed with").contains("server business effects");
    assertThat(exit).as(output).isZero();
    String suffix = engine.equals("h2") ? ".mv.db" : ".sqlite";
    assertThat(demoDir.resolve("client" + suffix)).exists();
    assertThat(demoDir.resolve("inbox").resolve("crypto" + suffix)).exists();
    assertThat(demoDir.resolve("inbox").resolve("history" + suffix)).exists();

    // a second run in the same folder would count the first run's effects: refused, untouched
    java.io.StringWriter err = new java.io.StringWriter();
    CommandLine again = OutboxTool.commandLine();
    again.setOut(new java.io.PrintWriter(new java.io.StringWriter()));
    again.setErr(new java.io.PrintWriter(err));
    long before = java.nio.file.Files.size(demoDir.resolve("client" + suffix));
    assertThat(again.execute("demo", "--dir", demoDir.toString(), "--engine", engine))
        .isEqualTo(2);
    assertThat(err.toString()).contains("holds an earlier demo run").doesNotContain("\tat ");
    assertThat(java.nio.file.Files.size(demoDir.resolve("client" + suffix))).isEqualTo(before);
  }
}
