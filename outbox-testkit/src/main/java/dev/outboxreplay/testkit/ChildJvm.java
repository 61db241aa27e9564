package dev.outboxreplay.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real child JVM running a {@code main} class from the current class path, for crash tests.
 * Its standard output is read line by line on a background thread; {@link #kill()} sends SIGKILL
 * ({@link Process#destroyForcibly()} on Unix), so the child gets no chance to clean up.
 */
public final class ChildJvm implements AutoCloseable {
  private static final String EOF = "\u0000EOF";

  private final Process process;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final Path stderr;

  private ChildJvm(Process process, Path stderr) {
    this.process = process;
    this.stderr = stderr;
    Thread reader = new Thread(this::pump, "child-stdout-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@code mainClass} with {@code args}; its stderr goes to {@code stderrFile}. The child
   * runs the current class path, packed into jars and started from a class-data archive that the
   * first call makes for the test JVM ({@link ChildClassData}); the plain class path when that
   * archive could not be made or is turned off.
   */
  public static ChildJvm start(Class<?> mainClass, Path stderrFile, String... args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ChildClassData.java());
    command.add("-Xmx256m");
    command.add("-XX:TieredStopAtLevel=1");
    command.addAll(ChildClassData.options());
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command)
        .redirectError(stderrFile.toFile())
        .redirectInput(ProcessBuilder.Redirect.PIPE)
        .start();
    return new ChildJvm(process, stderrFile);
  }

  private void pump() {
    try (BufferedReader in = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        lines.add(line);
      }
    } catch (IOException ignored) {
      // The child was killed mid-write; what was read is all there is.
    } finally {
      lines.add(EOF);
    }
  }

  /**
   * The next line the child printed, waiting at most {@code timeout}.
   *
   * @throws IllegalStateException when the child ended or stayed silent for {@code timeout};
   *     the message includes its stderr
   */
  public String nextLine(Duration timeout) throws InterruptedException {
    String line = lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (line == null || line.equals(EOF)) {
      if (line != null) {
        lines.add(EOF);
      }
      throw new IllegalStateException((line == null ? "child printed nothing for " + timeout
          : "child ended") + "; stderr:\n" + stderrText());
    }
    return line;
  }

  /** Sends SIGKILL and waits (bounded) for the process to be gone. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("child " + process.pid() + " survived SIGKILL for 30 s");
    }
  }

  /** The lines the child printed since the last read, without waiting for more. */
  public List<String> linesSoFar() {
    List<String> ready = new ArrayList<>();
    for (String line = lines.poll(); line != null; line = lines.poll()) {
      if (line.equals(EOF)) {
        lines.add(EOF);
        break;
      }
      ready.add(line);
    }
    return ready;
  }

  /** Every remaining line up to the end of the child's output; call after {@link #kill()}. */
  public List<String> remainingLines(Duration timeout) throws InterruptedException {
    List<String> rest = new ArrayList<>();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (line == null) {
        throw new IllegalStateException("child output did not end within " + timeout);
      }
      if (line.equals(EOF)) {
        lines.add(EOF);
        return rest;
      }
      rest.add(line);
    }
  }

  /** Writes a line to the child's standard input. */
  public void send(String line) throws IOException {
    process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
    process.getOutputStream().flush();
  }

  /**
   * Waits (bounded) for the child to exit by itself and returns its exit code.
   *
   * @throws IllegalStateException when it did not, with the child's threads in the message
   */
  public int waitForExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("child did not exit within " + timeout + "; its threads:\n"
          + threadDump(Duration.ofSeconds(10)));
    }
    return process.exitValue();
  }

  /** The child's process id. */
  public long pid() {
    return process.pid();
  }

  /**
   * The child's threads and their stacks, for a failure message: what {@code jcmd PID
   * Thread.print} of the running JDK prints, waited for at most {@code timeout}; else a line
   * saying why there is none. Never throws.
   */
  public String threadDump(Duration timeout) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    if (!process.isAlive() || !Files.isExecutable(jcmd)) {
      return "(no thread dump: " + (process.isAlive() ? jcmd + " not found" : "child ended")
          + ")";
    }
    try {
      Path out = Files.createTempFile("child-threads-", ".txt");
      try {
        Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()),
            "Thread.print").redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!dump.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          dump.destroyForcibly();
          return "(no thread dump: jcmd did not answer within " + timeout + ")";
        }
        return Files.readString(out);
      } finally {
        Files.deleteIfExists(out);
      }
    } catch (IOException e) {
      return "(no thread dump: " + e + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "(no thread dump: interrupted)";
    }
  }

  /** Whether the child process still runs. */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** What the child wrote to stderr so far. */
  public String stderrText() {
    try {
      return Files.readString(stderr);
    } catch (IOException e) {
      return "(stderr unreadable: " + e + ")";
    }
  }

  /** Kills the child if it still runs. */
  @Override
  public void close() {
    if (process.isAlive()) {
      try {
        kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
