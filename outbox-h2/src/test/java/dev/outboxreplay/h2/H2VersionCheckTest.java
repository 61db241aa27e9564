package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.internal.H2Version;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With another H2 on the class path than the one the library was built with, opening refuses and
 * names both versions: in the field H2 2.3.232 (a Spring Boot parent's) ran the library's repairs,
 * which read 2.5's layout, without a word. The child runs this build's classes with H2 2.3.232
 * (copied into {@code target/another-h2} by the build) in place of 2.5.252.
 */
class H2VersionCheckTest {
  @TempDir Path dir;

  @Test
  void theH2TheLibraryWasBuiltWithIsKnownAndIsTheOneHere() {
    assertThat(H2Version.BUILT_WITH).isEqualTo(org.h2.engine.Constants.VERSION)
        .startsWith("2.5.");
  }

  @Test
  void anotherH2OnTheClassPathIsRefusedNamingBothVersions() throws Exception {
    Path another;
    try (Stream<Path> jars = Files.list(Path.of("target", "another-h2"))) {
      another = jars.filter(p -> p.getFileName().toString().startsWith("h2-")).findFirst()
          .orElseThrow();
    }
    List<String> classPath = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!Path.of(entry).getFileName().toString().matches("h2-[0-9.]+\\.jar")) {
        classPath.add(entry);
      }
    }
    classPath.add(another.toAbsolutePath().toString());
    Path out = dir.resolve("out.txt");
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString(), "-cp", String.join(File.pathSeparator, classPath),
        OpenChild.class.getName(), dir.resolve("app").toString())
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String printed = Files.readString(out, StandardCharsets.UTF_8);
    assertThat(printed).contains("H2 2.3.232 is on the class path")
        .contains("built and tested with H2 " + H2Version.BUILT_WITH);
    assertThat(dir.resolve("app.mv.db")).as("nothing opened").doesNotExist();
  }

  /** Opens a database and prints what happened. */
  public static final class OpenChild {
    public static void main(String[] args) {
      try (H2Database db = H2Database.open(Path.of(args[0]))) {
        System.out.println("OPENED");
      } catch (RuntimeException e) {
        System.out.println(e.getMessage());
      }
    }
  }
}
