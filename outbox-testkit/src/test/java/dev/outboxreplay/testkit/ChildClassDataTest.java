package dev.outboxreplay.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Children run a class path of jars only and take their classes from the class-data archive: the
 * JDK's class-load log names the archive as their source.
 */
class ChildClassDataTest {
  @TempDir Path dir;

  /** A child main: prints its class path and a line, then exits. */
  public static final class Hello {
    private Hello() {}

    public static void main(String[] args) {
      System.out.println("CLASSPATH " + System.getProperty("java.class.path"));
      System.out.println("HELLO " + Seeds.class.getSimpleName());
    }
  }

  @Test
  void childrenRunJarsAndMapTheirClassesFromTheArchive() throws Exception {
    assertThat(ChildClassData.options()).as("made and in use")
        .anyMatch(option -> option.startsWith("-XX:SharedArchiveFile="));

    try (ChildJvm child = ChildJvm.start(Hello.class, dir.resolve("hello.err"))) {
      String classPath = child.nextLine(Duration.ofSeconds(60));
      assertThat(classPath).startsWith("CLASSPATH ");
      assertThat(classPath.substring("CLASSPATH ".length()).split(File.pathSeparator))
          .isNotEmpty().allMatch(entry -> entry.endsWith(".jar"));
      assertThat(child.nextLine(Duration.ofSeconds(60))).isEqualTo("HELLO Seeds");
      assertThat(child.waitForExit(Duration.ofSeconds(60))).isZero();
    }

    List<String> command = new ArrayList<>(List.of(ChildClassData.java()));
    command.addAll(ChildClassData.options());
    command.add("-Xlog:class+load=info:stdout");
    command.add(Hello.class.getName());
    Process logged = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(logged.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(logged.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(out.lines().filter(line -> line.contains(" " + Hello.class.getName() + " ")))
        .as(out).singleElement().asString().contains("source: shared objects file (top)");
    assertThat(out.lines().filter(line -> line.contains(" " + Seeds.class.getName() + " ")))
        .as(out).singleElement().asString().contains("source: shared objects file (top)");
  }
}
