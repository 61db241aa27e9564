package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.examples.cli.OutboxTool;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** The demo, run by the tool in this JVM on each engine. */
class ExamplesTest {
  @TempDir Path dir;

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
