package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small application compiled from the guide's code (docs/guide.md) ({@code GuideExamples.java}, unchanged)
 * and run in a child JVM with the library's jars, once on the module path as a named module and
 * once on the class path. The jars are the ones this build produced, not its class directories;
 * the module path holds only the library and what it needs at run time, so a missing
 * {@code requires}, an export the guide's code (docs/guide.md) needs, or a dependency that does not resolve as a
 * module fails here.
 */
class ModulePathConsumerTest {
  private static final Path EXAMPLES =
      Path.of("src", "test", "java", "dev", "outboxreplay", "examples", "GuideExamples.java");
  private static final Path CONSUMER = Path.of("src", "test", "resources", "consumer");
  /** File-name prefixes of the jars an application using every library module needs. */
  private static final List<String> RUNTIME_JARS = List.of("outbox-core-", "outbox-jdbc-",
      "outbox-h2-", "outbox-sqlite-", "sqlite-jdbc-",
      "outbox-http-", "outbox-server-", "outbox-micrometer-", "jackson-", "slf4j-api-",
      "resilience4j-core-", "h2-", "HikariCP-", "okhttp-jvm-", "okio-jvm-", "kotlin-stdlib-",
      "micrometer-", "HdrHistogram-", "LatencyUtils-", "jspecify-", "jetty-");
  private static final List<String> EXPECTED_LINES = List.of("quickStart queued",
      "sqliteStart queued", "replay acked",
      "metrics 1.0", "inbox CONSUMED DUPLICATE hello", "ownDataSource queued");

  private static final String CONSUMER_MAIN = "dev.outboxreplay.examples.GuideConsumer";

  @TempDir Path dir;

  @Test
  void theReadmeCodeRunsAsANamedModuleOnTheModulePath() throws Exception {
    assertThat(compileAndRun(true)).first().isEqualTo("module guide.consumer");
  }

  @Test
  void theReadmeCodeRunsOnTheClassPath() throws Exception {
    assertThat(compileAndRun(false)).first().isEqualTo("module null");
  }

  /**
   * Compiles the consumer (as the named module {@code guide.consumer}, or on the class path) and
   * runs it; checks it printed every expected result, and returns what it printed.
   */
  private List<String> compileAndRun(boolean named) throws Exception {
    Path out = dir.resolve("classes");
    String pathOption = named ? "--module-path" : "--class-path";
    compile(sources(named), out, pathOption, runtimeJars());
    List<String> launch = new ArrayList<>(List.of(pathOption,
        out + File.pathSeparator + runtimeJars()));
    launch.addAll(named ? List.of("--module", "guide.consumer/" + CONSUMER_MAIN)
        : List.of(CONSUMER_MAIN));
    List<String> output = run(launch.toArray(String[]::new));
    assertThat(output).containsSubsequence(EXPECTED_LINES);
    return output;
  }

  private Path sources(boolean named) throws IOException {
    Path src = dir.resolve("src");
    Path pkg = Files.createDirectories(src.resolve(Path.of("dev", "outboxreplay", "examples")));
    Files.copy(EXAMPLES, pkg.resolve("GuideExamples.java"));
    Files.copy(CONSUMER.resolve("GuideConsumer.java.txt"), pkg.resolve("GuideConsumer.java"));
    if (named) {
      Files.copy(CONSUMER.resolve("module-info.java.txt"), src.resolve("module-info.java"));
    }
    return src;
  }

  private static void compile(Path src, Path out, String pathOption, String path)
      throws IOException {
    List<String> args = new ArrayList<>(List.of("-d", out.toString(), pathOption, path,
        "-Xlint:-options", "-proc:none"));
    try (var files = Files.walk(src)) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    var errors = new java.io.ByteArrayOutputStream();
    int rc = javac.run(null, null, errors, args.toArray(String[]::new));
    assertThat(rc).as("javac %s%n%s", args, errors.toString(StandardCharsets.UTF_8)).isZero();
  }

  private List<String> run(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(Arrays.asList(args));
    command.add(dir.resolve("data").toString());
    Path log = dir.resolve("child.log");
    Process child = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    boolean exited = child.waitFor(120, TimeUnit.SECONDS);
    if (!exited) {
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    List<String> output = Files.readAllLines(log);
    assertThat(exited).as("the consumer finished within 120 s; it printed:%n%s",
        String.join("\n", output)).isTrue();
    assertThat(child.exitValue()).as("exit status; the consumer printed:%n%s",
        String.join("\n", output)).isZero();
    return output.stream().filter(l -> !l.startsWith("[") && !l.startsWith("SLF4J"))
        .collect(Collectors.toList());
  }

  /**
   * The run-time jars from this test's own class path: the library's packaged jars and their
   * dependencies, without test libraries. Class directories are refused: the core module's jar
   * holds a relocated dependency that its class directory does not.
   */
  private static String runtimeJars() {
    List<String> jars = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      if (RUNTIME_JARS.stream().anyMatch(name::startsWith)) {
        assertThat(name).as("class path entry %s: run after the library modules are packaged"
            + " (mvn verify)", entry).endsWith(".jar");
        jars.add(entry);
      }
    }
    assertThat(jars).as("library jars on the test class path")
        .anyMatch(j -> j.contains("outbox-core-")).anyMatch(j -> j.contains("outbox-server-"));
    return String.join(File.pathSeparator, jars);
  }
}
