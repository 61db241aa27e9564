package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README as a newcomer uses it: each Java block is a whole file of the sample app, compiles
 * on its own with the library's classes and nothing of the sample app, and its {@code main} runs
 * from a fresh folder where the relative paths it names land; the build snippets name this
 * version and only artifacts the BOM manages; the README stays short enough to read.
 */
class ReadmeTest {
  private static final Path README = Path.of("..", "README.md");
  private static final Path SAMPLE =
      Path.of("src", "main", "java", "dev", "outboxreplay", "examples", "notes");
  private static final Pattern CLASS = Pattern.compile("public final class (\\w+)");

  @TempDir Path dir;

  @Test
  void everyJavaBlockIsAWholeFileOfTheSampleApp() throws Exception {
    List<String> blocks = javaBlocks();
    assertThat(blocks).as("the README's java blocks").hasSize(3);
    for (String block : blocks) {
      String name = className(block);
      assertThat(block).as("README block %s against the sample app's file", name)
          .isEqualTo(Files.readString(SAMPLE.resolve(name + ".java")));
    }
  }

  @Test
  void eachBlockCompilesOnItsOwnAndItsMainRunsFromAFreshFolder() throws Exception {
    String libraries = Arrays.stream(System.getProperty("java.class.path")
            .split(File.pathSeparator))
        .filter(entry -> !entry.contains("examples" + File.separator + "target"))
        .collect(Collectors.joining(File.pathSeparator));
    Path work = Files.createDirectories(dir.resolve("newcomer"));
    List<String> printed = new ArrayList<>();
    for (String block : javaBlocks()) {
      String name = className(block);
      Path src = Files.createDirectories(dir.resolve("src-" + name));
      Path out = Files.createDirectories(dir.resolve("classes-" + name));
      Path file = Files.writeString(src.resolve(name + ".java"), block);
      JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
      java.io.StringWriter errors = new java.io.StringWriter();
      boolean compiled = javac.getTask(errors, null, null, List.of("--release", "17", "-d",
              out.toString(), "--class-path", libraries), null,
          javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)
              .getJavaFileObjects(file.toFile())).call();
      assertThat(compiled).as("%s compiled on its own: %s", name, errors).isTrue();
      if (block.contains("public static void main(")) {
        printed.add(run(work, out + File.pathSeparator + libraries,
            "dev.outboxreplay.examples.notes." + name));
      }
    }
    assertThat(printed).hasSize(2);
    assertThat(printed.get(0)).startsWith("saved note-1; queued as ");
    assertThat(printed.get(1)).isEqualTo("CONSUMED DUPLICATE");
    assertThat(work.resolve(Path.of("data", "notes.sqlite"))).as("the path the README names")
        .isRegularFile();
  }

  @Test
  void theReadmeStaysShortEnoughToReadTopToBottom() throws Exception {
    String[] words = Files.readString(README).trim().split("\\s+");
    System.out.println("README words: " + words.length);
    assertThat(words.length).as("words in the README, code included").isLessThanOrEqualTo(2_500);
  }

  @Test
  void theBuildSnippetsNameThisVersionAndOnlyArtifactsTheBomManages() throws Exception {
    String version = System.getProperty("project.version");
    assertThat(version).as("project.version from the build").isNotBlank();
    List<String> xml = GuideExamplesTest.blocks(Files.readAllLines(README), "```xml", "```");
    List<String> kotlin = GuideExamplesTest.blocks(Files.readAllLines(README), "```kotlin", "```");
    assertThat(xml).hasSize(1);
    assertThat(kotlin).hasSize(1);
    assertThat(xml.get(0)).contains("<artifactId>outbox-bom</artifactId>\n      <version>"
        + version + "</version>");
    assertThat(kotlin.get(0)).contains("platform(\"dev.outboxreplay:outbox-bom:" + version + "\")");
    String bom = Files.readString(Path.of("..", "outbox-bom", "pom.xml"));
    List<String> named = new ArrayList<>();
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("<artifactId>(outbox-[a-z0-9-]+)</artifactId>").matcher(xml.get(0));
    while (m.find()) {
      named.add(m.group(1));
    }
    m = java.util.regex.Pattern.compile("\"dev\\.outboxreplay:(outbox-[a-z0-9-]+)\"")
        .matcher(kotlin.get(0));
    while (m.find()) {
      named.add(m.group(1));
    }
    m = java.util.regex.Pattern.compile("^\\| `(outbox-[a-z0-9-]+)`", java.util.regex.Pattern.MULTILINE)
        .matcher(Files.readString(README));
    while (m.find()) {
      named.add(m.group(1));
    }
    assertThat(named).as("artifacts the README names").contains("outbox-sqlite", "outbox-http");
    for (String artifact : named) {
      if (!artifact.equals("outbox-bom")) {
        assertThat(bom).as("the BOM manages %s", artifact)
            .contains("<artifactId>" + artifact + "</artifactId>");
      }
    }
  }

  private static String run(Path workingDir, String classPath, String main) throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString(), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classPath, main)
        .directory(workingDir.toFile()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("%s ended", main).isTrue();
    assertThat(p.exitValue()).as("%s exit code; it printed: %s", main, output).isZero();
    return output;
  }

  private static List<String> javaBlocks() throws Exception {
    return GuideExamplesTest.blocks(Files.readAllLines(README), "```java", "```");
  }

  private static String className(String block) {
    Matcher m = CLASS.matcher(block);
    assertThat(m.find()).as("a public final class in:%n%s", block).isTrue();
    return m.group(1);
  }
}
