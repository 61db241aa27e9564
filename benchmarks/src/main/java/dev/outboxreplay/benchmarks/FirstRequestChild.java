package dev.outboxreplay.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The start of an app, in a JVM of its own: opens an outbox file, starts a replayer and reports
 * when its first request leaves ({@link HistoryProbe}'s start-up figure). The parent times it from
 * starting the process, so JVM start-up and class loading count, as they do for a user. It is
 * started with the plain {@code java -cp}, not testkit's {@code ChildJvm}: that one's tuning for
 * test children (a class-data archive, C1 only, a 256 MB heap) is not how an app starts.
 */
final class FirstRequestChild {
  private static final String SENT = "first-request-sent";

  private FirstRequestChild() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    // reported the moment the request left: closing afterwards is not part of the start
    HistoryProbe.millisToFirstRequest(Path.of(args[0]), BenchEngine.valueOf(args[1]), () -> {
      System.out.println(SENT);
      System.out.flush();
    });
  }

  /**
   * Runs one child on {@code file} of {@code engine}; returns the milliseconds from starting the process to the
   * child's report that its first request left. The child then closes and exits.
   */
  static double run(Path file, BenchEngine engine) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(FirstRequestChild.class.getName());
    command.add(file.toString());
    command.add(engine.name());
    long started = System.nanoTime();
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    double millis = Double.NaN;
    StringBuilder output = new StringBuilder();
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        if (line.startsWith(SENT) && Double.isNaN(millis)) {
          millis = (System.nanoTime() - started) / 1e6;
        } else {
          output.append(line).append('\n');
        }
      }
    }
    if (!child.waitFor(60, TimeUnit.SECONDS)) {
      child.destroyForcibly();
      throw new IllegalStateException("the start-up child did not exit within 60 s");
    }
    if (Double.isNaN(millis) || child.exitValue() != 0) {
      throw new IllegalStateException("the start-up child failed (exit " + child.exitValue()
          + "):\n" + output);
    }
    return millis;
  }
}
