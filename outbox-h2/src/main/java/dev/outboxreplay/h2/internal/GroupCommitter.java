package dev.outboxreplay.h2.internal;

import dev.outboxreplay.h2.H2Database;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lets concurrent callers share one commit. Each caller queues its unit of work and waits for the
 * commit lock; whoever holds it runs every queued unit in one transaction, each under its own
 * savepoint, and commits once. A unit that fails is rolled back to its savepoint and fails alone.
 * A caller returns only after the commit that holds its unit, so "returned" still means
 * "durable". A lone caller runs its own unit on its own thread: no hand-off cost.
 *
 * <p>Thread-safe.
 */
public final class GroupCommitter {
  /** Most units folded into one commit. */
  static final int MAX_GROUP = 512;

  /** A unit of work run inside the shared transaction. */
  @FunctionalInterface
  public interface Unit<R> {
    R run(Connection connection) throws SQLException;
  }

  private final H2Database database;
  private final ConcurrentLinkedQueue<Pending<?>> queue = new ConcurrentLinkedQueue<>();
  private final ReentrantLock commitLock = new ReentrantLock();

  public GroupCommitter(H2Database database) {
    this.database = database;
  }

  /**
   * Runs {@code unit} in a commit shared with whoever else is waiting, and returns its result
   * once that commit is durable.
   *
   * @throws SQLException when the unit or the commit failed; then nothing of the unit is written
   */
  public <R> R submit(Unit<R> unit) throws SQLException {
    Pending<R> pending = new Pending<>(unit);
    queue.add(pending);
    commitLock.lock();
    try {
      if (!pending.done) {
        commitQueued();
      }
    } finally {
      commitLock.unlock();
    }
    return pending.outcome();
  }

  /** Units queued and not yet taken into a commit; for tests and metrics. */
  public int waiting() {
    return queue.size();
  }

  private void commitQueued() {
    List<Pending<?>> group = new ArrayList<>();
    for (Pending<?> p; group.size() < MAX_GROUP && (p = queue.poll()) != null; ) {
      group.add(p);
    }
    try (Connection c = database.dataSource().getConnection()) {
      c.setAutoCommit(false);
      try {
        for (Pending<?> p : group) {
          Savepoint savepoint = group.size() > 1 ? c.setSavepoint() : null;
          try {
            p.runIn(c);
          } catch (SQLException | RuntimeException e) {
            if (savepoint != null) {
              c.rollback(savepoint);
            } else {
              c.rollback();
            }
            p.failure = e;
          }
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
      database.afterCommit(c);
    } catch (SQLException | RuntimeException e) {
      for (Pending<?> p : group) {
        if (p.failure == null) {
          p.failure = e;
        }
      }
    } finally {
      for (Pending<?> p : group) {
        p.done = true;
      }
    }
  }

  private static final class Pending<R> {
    private final Unit<R> unit;
    private R result;
    private Exception failure;
    private boolean done;

    Pending(Unit<R> unit) {
      this.unit = unit;
    }

    void runIn(Connection c) throws SQLException {
      result = unit.run(c);
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
