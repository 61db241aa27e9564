package dev.outboxreplay.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * Where the calling thread's time went during timed calls: on a CPU (the JVM's thread CPU
 * clock), runnable but waiting for a CPU (Linux {@code /proc/thread-self/schedstat}, the
 * scheduler's run-queue delay), and the rest, blocked: a lock, a park, a collector's pause or
 * I/O. Off Linux the run-queue share is not known and is counted as blocked.
 */
final class ThreadTimes {
  private static final Path SCHEDSTAT = Path.of("/proc/thread-self/schedstat");
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final long[] wall;
  private final long[] cpu;
  private final long[] runQueue;
  private long startWall;
  private long startCpu;
  private long startRunQueue;

  ThreadTimes(int samples) {
    wall = new long[samples];
    cpu = new long[samples];
    runQueue = new long[samples];
  }

  /** Starts timing one call on the calling thread. */
  void start() {
    startRunQueue = runQueueNanos();
    startCpu = THREADS.getCurrentThreadCpuTime();
    startWall = System.nanoTime();
  }

  /** Ends the call started last on the calling thread as sample {@code i}. */
  void stop(int i) {
    wall[i] = System.nanoTime() - startWall;
    cpu[i] = THREADS.getCurrentThreadCpuTime() - startCpu;
    runQueue[i] = runQueueNanos() - startRunQueue;
  }

  /** Each sample's wall time, in nanoseconds. */
  long[] wallNanos() {
    return wall.clone();
  }

  /**
   * The slowest {@code share} of the samples (at least one): their median wall time split into
   * the medians of on-CPU, run-queue and blocked time, in milliseconds.
   */
  String slowest(double share) {
    int count = Math.max(1, (int) Math.round(wall.length * share));
    int[] slow = IntStream.range(0, wall.length).boxed()
        .sorted(Comparator.comparingLong((Integer i) -> wall[i]).reversed())
        .limit(count).mapToInt(Integer::intValue).toArray();
    long[] blocked = Arrays.stream(slow)
        .mapToLong(i -> Math.max(0, wall[i] - cpu[i] - runQueue[i])).toArray();
    return String.format("slowest %d: %.2f ms, of it on a CPU %.2f, waiting for a CPU %.2f, "
        + "blocked %.2f (medians)", count, medianMillis(slow, wall), medianMillis(slow, cpu),
        medianMillis(slow, runQueue), BenchSupport.percentileMillis(blocked, 0.5));
  }

  private static double medianMillis(int[] indexes, long[] values) {
    return BenchSupport.percentileMillis(Arrays.stream(indexes).mapToLong(i -> values[i])
        .toArray(), 0.5);
  }

  /** The scheduler's run-queue delay of the calling thread so far; 0 where not readable. */
  private static long runQueueNanos() {
    try {
      return ThreadGroupTimes.schedstat(SCHEDSTAT)[1];
    } catch (IOException | RuntimeException notLinux) {
      return 0;
    }
  }
}
