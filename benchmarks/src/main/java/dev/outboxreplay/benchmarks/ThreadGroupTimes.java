package dev.outboxreplay.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where one group of this process's threads spent a timed section, read from Linux's {@code
 * /proc/self/task/<tid>/schedstat}: time on a CPU and time runnable but waiting in the run queue
 * for one. A group is every thread whose name starts with a prefix, as Linux keeps it (the first
 * 15 characters). Off Linux, or when {@code /proc} cannot be read, {@link #known()} is false.
 *
 * <p>Threads that end inside the section take their time with them: read the end before the
 * group's threads stop.
 */
final class ThreadGroupTimes {
  private static final Path TASKS = Path.of("/proc/self/task");
  /** Linux keeps a thread name's first 15 characters. */
  private static final int NAME_LIMIT = 15;

  private final String prefix;
  private final long onCpuNanos;
  private final long runQueueNanos;
  private final boolean known;

  private ThreadGroupTimes(String prefix, long onCpuNanos, long runQueueNanos, boolean known) {
    this.prefix = prefix;
    this.onCpuNanos = onCpuNanos;
    this.runQueueNanos = runQueueNanos;
    this.known = known;
  }

  /** The group's totals now, over its live threads. */
  static ThreadGroupTimes of(String threadNamePrefix) {
    String prefix = threadNamePrefix.length() > NAME_LIMIT
        ? threadNamePrefix.substring(0, NAME_LIMIT) : threadNamePrefix;
    long cpu = 0;
    long queue = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        long[] stat;
        try {
          if (!Files.readString(task.resolve("comm")).strip().startsWith(prefix)) {
            continue;
          }
          stat = schedstat(task.resolve("schedstat"));
        } catch (IOException ended) {
          continue; // the thread ended while the tasks were listed
        }
        cpu += stat[0];
        queue += stat[1];
      }
    } catch (IOException | RuntimeException e) {
      return new ThreadGroupTimes(prefix, 0, 0, false);
    }
    return new ThreadGroupTimes(prefix, cpu, queue, true);
  }

  /**
   * One thread's {@code schedstat}: nanoseconds on a CPU, then nanoseconds runnable in the run
   * queue.
   */
  static long[] schedstat(Path file) throws IOException {
    String[] fields = Files.readString(file).strip().split(" ");
    return new long[] {Long.parseLong(fields[0]), Long.parseLong(fields[1])};
  }

  boolean known() {
    return known;
  }

  /**
   * "on a CPU X us, waiting for one Y us per command" for the section from {@code start} to this,
   * or "not known".
   */
  String perCommandSince(ThreadGroupTimes start, int commands) {
    if (!known || !start.known) {
      return prefix + ": not known (no /proc/self/task)";
    }
    return String.format(Locale.ROOT, "%s on a CPU %.0f us, waiting for one %.0f us",
        prefix, (onCpuNanos - start.onCpuNanos) / 1e3 / commands,
        (runQueueNanos - start.runQueueNanos) / 1e3 / commands);
  }
}
