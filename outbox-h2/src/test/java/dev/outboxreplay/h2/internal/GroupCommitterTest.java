package dev.outboxreplay.h2.internal;

import dev.outboxreplay.jdbc.internal.GroupCommitter;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.H2Database;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GroupCommitterTest {
  @TempDir Path dir;

  @Test
  void callersWaitingDuringACommitShareTheNextOneAndAFailingUnitFailsAlone() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("group"))) {
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE t (n INT PRIMARY KEY, tx BIGINT)");
      }
      GroupCommitter<Unit, Integer> committer = new GroupCommitter<>(db, new UnitWriter());
      CountDownLatch firstInside = new CountDownLatch(1);
      CountDownLatch releaseFirst = new CountDownLatch(1);
      AtomicInteger queued = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        Future<Integer> first = pool.submit(() -> committer.submit((Unit) c -> {
          insert(c, 0);
          firstInside.countDown();
          try {
            releaseFirst.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return 0;
        }));
        assertThat(firstInside.await(30, TimeUnit.SECONDS)).isTrue();
        List<Future<Integer>> others = new ArrayList<>();
        for (int i = 1; i <= 7; i++) {
          int n = i;
          others.add(pool.submit(() -> {
            queued.incrementAndGet();
            return committer.submit((Unit) c -> {
              if (n == 4) {
                insert(c, 0); // key already committed by the first caller: this unit alone fails
              }
              insert(c, n);
              return n;
            });
          }));
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
            .until(() -> queued.get() == 7 && committer.waiting() == 7);
        releaseFirst.countDown();
        assertThat(first.get(30, TimeUnit.SECONDS)).isZero();
        int failed = 0;
        for (Future<Integer> f : others) {
          try {
            f.get(30, TimeUnit.SECONDS);
          } catch (java.util.concurrent.ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(SQLException.class);
            failed++;
          }
        }
        assertThat(failed).isEqualTo(1);
      } finally {
        pool.shutdownNow();
      }
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*), COUNT(DISTINCT tx) FROM t WHERE n > 0")) {
        rs.next();
        assertThat(rs.getInt(1)).as("rows of the six good units").isEqualTo(6);
        assertThat(rs.getInt(2)).as("transactions they were committed in").isEqualTo(1);
      }
    }
  }

  /** A test input: arbitrary work on the shared connection. */
  @FunctionalInterface
  interface Unit {
    int run(Connection c) throws SQLException;
  }

  /** Writes a group by running each unit in turn, so a failing unit fails the batch attempt. */
  static final class UnitWriter implements GroupCommitter.GroupWriter<Unit, Integer> {
    int batchAttempts;

    @Override
    public List<Integer> writeAll(Connection c, List<Unit> inputs) throws SQLException {
      batchAttempts++;
      List<Integer> results = new ArrayList<>();
      for (Unit u : inputs) {
        results.add(u.run(c));
      }
      return results;
    }

    @Override
    public Integer writeOne(Connection c, Unit input) throws SQLException {
      return input.run(c);
    }
  }

  private static void insert(Connection c, int n) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("INSERT INTO t VALUES (" + n + ", TRANSACTION_ID())");
    }
  }
}
