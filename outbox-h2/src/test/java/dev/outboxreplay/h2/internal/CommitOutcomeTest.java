package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.h2.H2Database;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.h2.engine.Database;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit that H2 reports as done while the database closes the session under it, reproduced
 * step by step on a served file: the commit reaches the session between its close's rollback and
 * the session's detaching from the database (held there by holding the database's monitor,
 * which {@code Database.removeSession} needs). H2 answers the {@code COMMIT} normally and the row
 * is gone; {@link CommitOutcome#requireKnown} is what tells the caller.
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
        SessionLocal localSession =
            (SessionLocal) local.unwrap(JdbcConnection.class).getSession();
        Database database = localSession.getDatabase();
        SessionLocal served = Arrays.stream(database.getSessions(false))
            .filter(s -> s.getNetworkConnectionInfo() != null)
            .findFirst().orElseThrow();

        Thread closing = new Thread(served::close, "closing-served-session");
        CompletableFuture<Void> committed;
        synchronized (database) {
          closing.start();
          // the close has rolled back and now waits for the monitor in removeSession
          Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
              closing.getState() == Thread.State.BLOCKED && Arrays.stream(closing.getStackTrace())
                  .anyMatch(f -> f.getMethodName().equals("removeSession")));
          committed = CompletableFuture.runAsync(() -> {
            try {
              remote.commit();
            } catch (SQLException e) {
              throw new IllegalStateException(e);
            }
          });
          committed.get(10, TimeUnit.SECONDS);
        }
        closing.join(10_000);

        assertThat(committed).as("H2 reports the commit as done").isCompleted()
            .isNotCompletedExceptionally();
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
    Properties lock = new Properties();
    try (Reader in = Files.newBufferedReader(Path.of(file + ".lock.db"))) {
      lock.load(in);
    }
    String server = lock.getProperty("server"); // "localhost:port"; connect to loopback only
    String port = server.substring(server.lastIndexOf(':') + 1);
    return DriverManager.getConnection(
        "jdbc:h2:tcp://127.0.0.1:" + port + "/" + lock.getProperty("id"), "sa", "");
  }
}
