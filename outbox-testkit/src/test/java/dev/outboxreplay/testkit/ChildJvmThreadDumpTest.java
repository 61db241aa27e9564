package dev.outboxreplay.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A failure message can show what a stuck child was doing: its threads, from the JDK's jcmd. */
class ChildJvmThreadDumpTest {
  @TempDir Path dir;

  /** A child main: says READY, then waits in a named method until its stdin closes. */
  public static final class WaitForStdin {
    private WaitForStdin() {}

    public static void main(String[] args) throws Exception {
      System.out.println("READY");
      System.out.flush();
      waitingForStdinToClose();
    }

    private static void waitingForStdinToClose() throws Exception {
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    }
  }

  @Test
  void aRunningChildsThreadsAreDumpedAndAnEndedOneSaysSo() throws Exception {
    ChildJvm child = ChildJvm.start(WaitForStdin.class, dir.resolve("wait.err"));
    try {
      assertThat(child.nextLine(Duration.ofSeconds(60))).isEqualTo("READY");
      String dump = child.threadDump(Duration.ofSeconds(60));
      assertThat(dump).as(dump).contains("\"main\"")
          .contains(WaitForStdin.class.getName() + ".waitingForStdinToClose");
    } finally {
      child.kill();
    }
    assertThat(child.threadDump(Duration.ofSeconds(60)))
        .isEqualTo("(no thread dump: child ended)");
  }
}
