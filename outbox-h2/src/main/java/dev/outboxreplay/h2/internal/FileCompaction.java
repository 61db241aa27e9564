package dev.outboxreplay.h2.internal;

import java.sql.Connection;
import java.sql.SQLException;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.FileStore;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.RandomAccessStore;

/**
 * The one place that reaches into H2's storage engine: compacting the file of a database this
 * process serves, while it is open. H2 does this itself only in its background writer, which it
 * runs only with a positive {@code WRITE_DELAY}; the library needs {@code WRITE_DELAY=0} for
 * accepts to be durable on return, so without this the dead space in the file is never given
 * back while it is open.
 *
 * <p>Entry points used (all public in H2 2.5.252; {@code FileCompactionTest} fails when an H2
 * upgrade removes or changes one): {@link JdbcConnection#getSession()}, {@link
 * SessionLocal#getDatabase()}, {@code Database.getStore().getMvStore()}, {@link
 * MVStore#getCurrentVersion()}, {@link FileStore#populateInfo} (its {@code
 * info.CHUNKS_FILL_RATE_RW}), {@link
 * MVStore#compact(int, int)} (rewrites the live pages of sparse chunks into a new chunk, under
 * the store lock, at most about {@code rewriteBytes}), and {@link
 * RandomAccessStore#compactMoveChunks(int, long, MVStore)} (moves chunks from the end of the file
 * into free space nearer its start, syncing before it overwrites anything, then truncates the
 * file; at most {@code moveBytes}). These are the steps H2's own background housekeeping takes,
 * with the same kind of bounds. Neither changes H2's retention time: a chunk that became free
 * is reused only once it has been unused for that long (45 s by default).
 */
public final class FileCompaction {
  private FileCompaction() {}

  /** What one step did. */
  public record Step(boolean servedHere, long sizeBefore, long sizeAfter, boolean rewrote,
      int chunksFillRate, int fileFillRate) {
    /** A step in a process that reaches the file through another process's server. */
    static final Step NOT_SERVED_HERE = new Step(false, 0, 0, false, 100, 100);

    /** Bytes the file shrank by. */
    public long shrunkBy() {
      return sizeBefore - sizeAfter;
    }
  }

  /**
   * One bounded compaction step on the database {@code connection} belongs to: rewrites sparse
   * chunks when the live share of the space of the chunks old enough to be rewritten ({@link
   * #rewritableChunksFillRate}) is below {@code targetFillRate} percent, then
   * moves chunks toward the start of the file and truncates it when the live share of the file
   * is at or below {@code targetFillRate}.
   *
   * @return what it did; {@link Step#servedHere()} is false when this process does not have the
   *     file open itself (it reaches it through another process's server) or the database keeps
   *     no file: then nothing was done
   * @throws SQLException when the connection is not an H2 connection
   */
  public static Step step(Connection connection, int targetFillRate, int rewriteBytes,
      long moveBytes) throws SQLException {
    SessionLocal local = ServedHere.localSession(connection);
    if (local == null) {
      return Step.NOT_SERVED_HERE;
    }
    MVStore store = local.getDatabase().getStore().getMvStore();
    FileStore<?> file = store.getFileStore();
    if (store.isClosed() || file == null || file.isReadOnly()) {
      return Step.NOT_SERVED_HERE;
    }
    long before = file.size();
    // MVStore.compact tests the live share of all chunks, and then takes any chunk old enough
    // to be rewritten however full it is: while only young chunks are sparse it rewrote full
    // old ones into new young ones. So the test here is H2's own housekeeping's: the chunks
    // old enough to be rewritten; 100 makes compact's own test pass whenever anything is dead.
    boolean rewrote = rewritableChunksFillRate(file) < targetFillRate
        && store.compact(100, rewriteBytes);
    if (file instanceof RandomAccessStore randomAccess) {
      randomAccess.compactMoveChunks(targetFillRate, moveBytes, store);
    }
    return new Step(true, before, file.size(), rewrote, file.getChunksFillRate(),
        file.getFillRate());
  }

  /**
   * The live share, in percent, of the chunks H2 may rewrite now: those older than its retention
   * time and not of the two newest versions. H2 publishes it only through {@link
   * FileStore#populateInfo} (as {@code info.CHUNKS_FILL_RATE_RW}, also in {@code
   * INFORMATION_SCHEMA.SETTINGS}, which {@code FileCompactionTest} reads); when it does not, the
   * live share of all chunks, the test H2's {@code compact} makes itself.
   */
  static int rewritableChunksFillRate(FileStore<?> file) {
    int[] rate = {-1};
    file.populateInfo((name, value) -> {
      if (name.equals("info.CHUNKS_FILL_RATE_RW")) {
        rate[0] = Integer.parseInt(value);
      }
    });
    return rate[0] >= 0 ? rate[0] : file.getChunksFillRate();
  }

  /**
   * The version of the store behind {@code dataSource}: it moves with every commit, anyone's.
   *
   * @return the version; -1 when this process does not have the file open itself or the
   *     database keeps no file
   * @throws SQLException when no connection can be had or it is not an H2 connection
   */
  public static long storeVersion(javax.sql.DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      SessionLocal local = ServedHere.localSession(c);
      if (local == null) {
        return -1;
      }
      MVStore store = local.getDatabase().getStore().getMvStore();
      return store.isClosed() || store.getFileStore() == null ? -1 : store.getCurrentVersion();
    }
  }

  /**
   * What {@link #run} did: steps taken, the file's size before the first and after the last, and
   * whether the budget ended it while its last step still found work ({@code workLeft}).
   */
  public record Run(boolean servedHere, int steps, long sizeBefore, long sizeAfter,
      int chunksFillRate, int fileFillRate, long longestStepNanos, boolean workLeft) {
    /** Bytes the file shrank by. */
    public long shrunkBy() {
      return sizeBefore - sizeAfter;
    }

    /**
     * Whether a step rewrote or moved anything: steps go on only after one that did, and a run
     * the budget ended after such a step has work left.
     */
    public boolean madeProgress() {
      return steps > 1 || workLeft;
    }
  }

  /**
   * Takes {@linkplain #step steps} on one pooled connection until one neither rewrote nor shrank
   * anything, or {@code budgetNanos} of {@link System#nanoTime()} passed. Between steps the
   * store lock is free, so commits of other threads go on.
   */
  public static Run run(javax.sql.DataSource dataSource, long budgetNanos, int targetFillRate,
      int rewriteBytes, long moveBytes) throws SQLException {
    long stopAt = System.nanoTime() + budgetNanos;
    try (Connection c = dataSource.getConnection()) {
      long started = System.nanoTime();
      Step first = step(c, targetFillRate, rewriteBytes, moveBytes);
      long longest = System.nanoTime() - started;
      if (!first.servedHere()) {
        return new Run(false, 0, 0, 0, 100, 100, longest, false);
      }
      Step last = first;
      int steps = 1;
      while ((last.rewrote() || last.shrunkBy() > 0) && System.nanoTime() - stopAt < 0) {
        started = System.nanoTime();
        last = step(c, targetFillRate, rewriteBytes, moveBytes);
        longest = Math.max(longest, System.nanoTime() - started);
        steps++;
      }
      return new Run(true, steps, first.sizeBefore(), last.sizeAfter(), last.chunksFillRate(),
          last.fileFillRate(), longest, last.rewrote() || last.shrunkBy() > 0);
    }
  }
}
