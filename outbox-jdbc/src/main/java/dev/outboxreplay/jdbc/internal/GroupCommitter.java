package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.jdbc.JdbcDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lets concurrent callers share one commit (leader/follower). Each caller queues its input;
 * whoever gets the commit lock becomes the leader, writes every queued input in one transaction
 * (first all at once through {@link GroupWriter#writeAll}; if that fails, one by one, each under
 * its own savepoint), commits once, and wakes the callers whose inputs it committed. An input
 * that fails on its own is rolled back to its savepoint and fails alone. A caller returns
 * only after the commit that holds its unit, so "returned" still means "durable". A lone caller
 * runs its own unit on its own thread: no hand-off cost.
 *
 * <p>Followers learn that their unit is done from the unit itself, never by taking the lock:
 * waiting for the lock only to find the work finished would let one thread keep re-taking the
 * lock and commit alone while the others queue behind it.
 *
 * <p>Thread-safe.
 */
public final class GroupCommitter<I, R> {
  /** Most units folded into one commit. */
  static final int MAX_GROUP = 512;
  private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  /**
   * Longest a leader waits for callers already inside {@link #submit} to queue before it commits
   * (like PostgreSQL's commit_delay with commit_siblings): a small fraction of one commit, paid
   * only when other callers are active, and it lets them share this commit instead of each
   * waiting for their own.
   */
  private static final long GATHER_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

  /** Writes inputs inside the shared transaction; never commits. */
  public interface GroupWriter<I, R> {
    /**
     * Writes all inputs at once (for example as one JDBC batch), one result per input in order.
     * May leave partial writes behind when it throws: the leader rolls them back and falls back
     * to {@link #writeOne}.
     */
    List<R> writeAll(Connection connection, List<I> inputs) throws SQLException;

    /** Writes one input; a failure fails that input's caller alone. */
    R writeOne(Connection connection, I input) throws SQLException;
  }

  private final JdbcDatabase database;
  private final GroupWriter<I, R> writer;
  private final ConcurrentLinkedQueue<Pending<I, R>> queue = new ConcurrentLinkedQueue<>();
  private final ReentrantLock commitLock = new ReentrantLock();
  private final AtomicInteger active = new AtomicInteger();
  /** The leader's connection, kept in a transaction; touched only under {@link #commitLock}. */
  private Connection leaderConnection;

  public GroupCommitter(JdbcDatabase database, GroupWriter<I, R> writer) {
    this.database = database;
    this.writer = writer;
  }

  /**
   * Writes {@code input} in a commit shared with whoever else is waiting, and returns its result
   * once that commit is durable.
   *
   * @throws SQLException when the input or the commit failed; then nothing of it is written
   */
  public R submit(I input) throws SQLException {
    Pending<I, R> pending = new Pending<>(input, Thread.currentThread());
    active.incrementAndGet();
    try {
      queue.add(pending);
      awaitCommit(pending);
    } finally {
      active.decrementAndGet();
    }
    return pending.outcome();
  }

  private void awaitCommit(Pending<I, R> pending) {
    while (!pending.done) {
      if (commitLock.tryLock()) {
        try {
          if (!pending.done) {
            commitQueued();
          }
        } finally {
          commitLock.unlock();
        }
        Pending<I, R> nextLeader = queue.peek();
        if (nextLeader != null) {
          LockSupport.unpark(nextLeader.thread);
        }
      } else {
        // Woken when our unit is committed, or when we should try to lead the next group.
        LockSupport.parkNanos(this, PARK_NANOS);
      }
    }
  }

  /** Gives callers that are already inside submit a moment to queue; see GATHER_NANOS. */
  private void gather() {
    long deadline = System.nanoTime() + GATHER_NANOS;
    while (queue.size() < Math.min(active.get(), MAX_GROUP) && System.nanoTime() < deadline) {
      Thread.yield();
    }
  }

  /** Inputs queued and not yet taken into a commit. */
  public int waiting() {
    return queue.size();
  }

  private void commitQueued() {
    gather();
    List<Pending<I, R>> group = new ArrayList<>();
    for (Pending<I, R> p; group.size() < MAX_GROUP && (p = queue.poll()) != null; ) {
      group.add(p);
    }
    try {
      Connection c = leaderConnection();
      try {
        database.dialect().beginWrite(c);
        if (group.size() == 1 || !writeAllAtOnce(c, group)) {
          writeOneByOne(c, group);
        }
        c.commit();
        database.afterCommit(c); // throws when the commit's outcome is unknown
      } catch (SQLException | RuntimeException e) {
        discardLeaderConnection();
        throw e;
      }
    } catch (SQLException | RuntimeException e) {
      for (Pending<I, R> p : group) {
        p.result = null;
        if (p.failure == null) {
          p.failure = e;
        }
      }
    } finally {
      for (Pending<I, R> p : group) {
        p.done = true;
        LockSupport.unpark(p.thread);
      }
    }
  }

  private Connection leaderConnection() throws SQLException {
    if (leaderConnection == null) {
      Connection c = database.dataSource().getConnection();
      c.setAutoCommit(false);
      leaderConnection = c;
    }
    return leaderConnection;
  }

  /** Rolls back and returns the leader's connection to the pool; the next leader opens another. */
  private void discardLeaderConnection() {
    Connection c = leaderConnection;
    leaderConnection = null;
    try (c) {
      c.rollback();
    } catch (SQLException ignored) {
      // The connection is broken; closing it hands it back to the pool, which evicts it.
    }
  }

  /** Gives the leader's connection back to the pool; the committer stays usable. */
  public void close() {
    commitLock.lock();
    try {
      if (leaderConnection != null) {
        discardLeaderConnection();
      }
    } finally {
      commitLock.unlock();
    }
  }

  private boolean writeAllAtOnce(Connection c, List<Pending<I, R>> group) throws SQLException {
    Savepoint start = c.setSavepoint();
    try {
      List<I> inputs = new ArrayList<>(group.size());
      for (Pending<I, R> p : group) {
        inputs.add(p.input);
      }
      List<R> results = writer.writeAll(c, inputs);
      for (int i = 0; i < group.size(); i++) {
        group.get(i).result = results.get(i);
      }
      return true;
    } catch (SQLException | RuntimeException e) {
      if (!Rollback.after(e, c, start)) {
        throw e; // the connection broke: the first failure says why, not the rollback's
      }
      return false;
    }
  }

  private void writeOneByOne(Connection c, List<Pending<I, R>> group) throws SQLException {
    for (Pending<I, R> p : group) {
      Savepoint savepoint = group.size() > 1 ? c.setSavepoint() : null;
      try {
        p.result = writer.writeOne(c, p.input);
      } catch (SQLException | RuntimeException e) {
        p.failure = e;
        if (!Rollback.after(e, c, savepoint)) {
          throw e;
        }
      }
    }
  }

  private static final class Pending<I, R> {
    private final I input;
    private final Thread thread;
    private R result;
    private Exception failure;
    /** Written last by the leader; its volatile write publishes result and failure. */
    private volatile boolean done;

    Pending(I input, Thread thread) {
      this.input = input;
      this.thread = thread;
    }

    R outcome() throws SQLException {
      if (failure instanceof SQLException e) {
        throw e;
      }
      if (failure instanceof RuntimeException e) {
        throw e;
      }
      return result;
    }
  }
}
