package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2LockFile;
import dev.outboxreplay.h2.H2OutboxStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.h2.engine.Database;
import org.h2.engine.SessionLocal;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit that H2 reports as done while the database closes the session under it, reproduced
 * step by step on a served file: the commit reaches the session between its close's rollback and
 * the session's detaching from the database (held there by holding the database's monitor,
 * which {@code Database.removeSession} needs). H2 answers the {@code COMMIT} normally and the row
 * is gone; {@link CommitOutcome#requireKnown} is what tells the caller. Without that check the
 * second test's accept returns and its row is missing: the lost accept that {@code
 * StorageErrorsTest} caught about once in 5 to 10 module runs when the serving process closed.
 */
class CommitOutcomeTest {
  @TempDir Path dir;

  @Test
  void aCommitThatRanWhileTheDatabaseClosedItsSessionIsReportedUnknown() throws Exception {
    Path file = dir.resolve("served");
    try (H2Database db = H2Database.open(file); // serves the file to other processes
        Connection local = db.dataSource().getConnection()) {
      try (Statement s = local.createStatement()) {
        s.execute("CREATE TABLE t (id INT PRIMARY KEY)");
      }
      try (Connection remote = connectThroughServer(file)) {
        remote.setAutoCommit(false);
        try (Statement s = remote.createStatement()) {
          s.executeUpdate("INSERT INTO t VALUES (1)");
          remote.commit(); // H2's client keeps its prepared COMMIT from here on
          s.executeUpdate("INSERT INTO t VALUES (2)");
        }
        Database database = ServedHere.localSession(local).getDatabase();
        SessionLocal served = Arrays.stream(database.getSessions(false))
            .filter(s -> s.getNetworkConnectionInfo() != null)
            .findFirst().orElseThrow();

        assertThatCode(() -> commitWhileClosing(database, served, remote::commit))
            .as("H2 reports the commit as done").doesNotThrowAnyException();
        assertThat(rows(local)).as("yet row 2 is not stored: the close rolled it back").isOne();
        assertThat(remote.isClosed()).isTrue();
        assertThatThrownBy(() -> CommitOutcome.requireKnown(remote))
            .isInstanceOfSatisfying(SQLException.class, e -> {
              assertThat(e.getSQLState()).isEqualTo(CommitOutcome.RESOLUTION_UNKNOWN);
              assertThat(Handover.isHandover(e)).isTrue();
            });
        assertThatThrownBy(() -> db.afterCommit(remote))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("whether the transaction committed is unknown");
      }
      CommitOutcome.requireKnown(local); // an open session's commit is known
      db.afterCommit(local);
    }
  }

  /**
   * The library's accept, on a connection whose commit meets the same interleaving: the first
   * try's commit is reported done while its row was rolled back; the accept runs again and the
   * row is stored once.
   */
  @Test
  void anAcceptWhoseCommitTheClosingSessionRolledBackIsWrittenAgain() throws Exception {
    Path file = dir.resolve("served");
    try (H2Database served = H2Database.open(file);
        Connection local = served.dataSource().getConnection()) {
      H2OutboxStore.create(served); // the schema
      Database database = ServedHere.localSession(local).getDatabase();
      AtomicBoolean closeAtNextCommit = new AtomicBoolean();
      DataSource throughServer = throughServer(file, database, closeAtNextCommit);
      try (H2Database remote = H2Database.builder().dataSource(throughServer)
          .withoutCrashRepairs(true).build()) {
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(remote)).build();
        outbox.accept(OutboxCommand.of("op", "e", Map.of("n", 1)));
        closeAtNextCommit.set(true);
        OutboxRecord second = outbox.accept(OutboxCommand.of("op", "e", Map.of("n", 2)));
        assertThat(closeAtNextCommit).as("the interleaving ran").isFalse();
        H2OutboxStore store = H2OutboxStore.create(served);
        assertThat(store.find(second.commandId())).as("the accept that returned is stored")
            .isPresent();
        assertThat(store.countByStatus()).containsEntry(Status.QUEUED, 2L);
      }
    }
  }

  /**
   * Runs {@code commit} while {@code session} is being closed: after its close rolled back and
   * before it leaves the database, where the close waits for the database's monitor, which
   * another thread holds meanwhile (for 10 s at most, so a commit that needed it too would go on
   * after that, in another order, and fail the assertions instead of hanging).
   */
  private static void commitWhileClosing(Database database, SessionLocal session,
      SqlRunnable commit) throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread holder = new Thread(() -> {
      synchronized (database) {
        held.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }, "holding-the-database-monitor");
    Thread closing = new Thread(session::close, "closing-served-session");
    holder.start();
    held.await();
    closing.start();
    try {
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
          closing.getState() == Thread.State.BLOCKED && Arrays.stream(closing.getStackTrace())
              .anyMatch(f -> f.getMethodName().equals("removeSession")));
      commit.run();
    } finally {
      release.countDown();
      holder.join(10_000);
      closing.join(10_000);
    }
  }

  @FunctionalInterface
  private interface SqlRunnable {
    void run() throws SQLException;
  }

  /**
   * Connections over TCP to the server of {@code file}; the next commit after {@code
   * closeAtNextCommit} is set runs while the database closes that connection's session.
   */
  private static DataSource throughServer(Path file, Database database,
      AtomicBoolean closeAtNextCommit) throws Exception {
    JdbcDataSource tcp = new JdbcDataSource();
    tcp.setURL(H2LockFile.read(Path.of(file + ".lock.db")).loopbackUrl());
    tcp.setUser("sa");
    tcp.setPassword("");
    return proxy(DataSource.class, tcp, (method, args) -> method.getName().equals("getConnection")
        ? closingAtNextCommit(tcp.getConnection(), database, closeAtNextCommit)
        : method.invoke(tcp, args));
  }

  private static Connection closingAtNextCommit(Connection c, Database database,
      AtomicBoolean closeAtNextCommit) throws Exception {
    int sessionId;
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("CALL SESSION_ID()")) {
      rs.next();
      sessionId = rs.getInt(1);
    }
    return proxy(Connection.class, c, (method, args) -> {
      if (!method.getName().equals("commit") || !closeAtNextCommit.getAndSet(false)) {
        return method.invoke(c, args);
      }
      SessionLocal served = Arrays.stream(database.getSessions(false))
          .filter(s -> s.getId() == sessionId).findFirst().orElseThrow();
      commitWhileClosing(database, served, c::commit);
      return null;
    });
  }

  /** What a proxy does with a call; a target's own exception is rethrown as it is. */
  @FunctionalInterface
  private interface Handler {
    Object handle(Method method, Object[] args) throws Throwable;
  }

  private static <T> T proxy(Class<T> type, T target, Handler handler) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (p, method, args) -> {
          try {
            return handler.handle(method, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        }));
  }

  private static long rows(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * A connection over TCP to the server that H2 started for other processes: its port and key are
   * in the lock file, where another process reads them.
   */
  private static Connection connectThroughServer(Path file) throws Exception {
    return DriverManager.getConnection(
        H2LockFile.read(Path.of(file + ".lock.db")).loopbackUrl(), "sa", "");
  }
}
