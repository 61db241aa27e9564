package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.h2.internal.Handover;
import dev.outboxreplay.h2.internal.ServedHere;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.ListeningSockets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link H2Database#close()} in the process that serves a shared file closes the file for the
 * other processes too, instead of leaving it open and served until they disconnect or the JVM
 * exits. The serving child here closes its database and keeps running.
 */
class ServedFileCloseTest {
  private static final Duration CHILD = Duration.ofSeconds(60);

  @TempDir Path dir;

  /**
   * Before the serving child closes, this process reaches the file through it and holds an open
   * transaction. After the child's close returns (the child still running): that transaction is
   * gone (its commit fails as a handover, its row is not in the file), the next accept takes the
   * file over (this process then serves it, by the port its lock file names), and every accept
   * that returned is there.
   * A second database of this process that reaches the file through the child's server, closed
   * first, ends nobody's session: the first one's transaction is still open after it.
   */
  @Test
  void theServingProcessClosingLetsGoOfTheFileWhileItKeepsRunning() throws Exception {
    assumeTrue(ListeningSockets.available(), "needs Linux /proc");
    Path file = dir.resolve("shared");
    try (ChildJvm server = ServeFileChild.serving(file, dir.resolve("server.err"))) {
      try (H2Database db = H2Database.open(file)) {
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
        List<CommandId> accepted = new ArrayList<>();
        for (int n = 0; n < 5; n++) {
          accepted.add(outbox.accept(OutboxCommand.of("op", "e", Map.of("n", n))).commandId());
        }
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
          assertThat(ServedHere.localSession(c)).as("reached through the child").isNull();
          s.execute("CREATE TABLE app_row (id INT PRIMARY KEY)");
        }
        try (Connection open = db.dataSource().getConnection()) {
          open.setAutoCommit(false);
          try (Statement s = open.createStatement()) {
            s.executeUpdate("INSERT INTO app_row VALUES (1)");
          }
          // a client closing ends no one's session: this transaction stays open
          try (H2Database second = H2Database.open(file)) {
            H2OutboxStore.create(second).countByStatus();
          }
          try (Statement s = open.createStatement()) {
            s.executeUpdate("INSERT INTO app_row VALUES (2)");
          }

          server.send("close-and-stay");
          assertThat(server.nextLine(CHILD)).as(server.stderrText()).isEqualTo("CLOSED");
          assertThat(server.isAlive()).as("the child keeps running after its close").isTrue();

          assertThatThrownBy(open::commit).as("the open transaction ended with the close")
              .isInstanceOfSatisfying(SQLException.class,
                  e -> assertThat(Handover.isHandover(e)).as(e.toString()).isTrue());
          assertThat(server.stderrText()).containsPattern("for [1-9][0-9]* session\\(s\\) of "
              + "other processes");
        }
        // the file is free: the next accept takes it over, while the child still runs
        accepted.add(outbox.accept(OutboxCommand.of("op", "e", Map.of("n", 5))).commandId());
        assertThat(server.isAlive()).isTrue();
        long self = ProcessHandle.current().pid();
        Path lockFile = dir.resolve("shared.lock.db");
        Awaitility.await().atMost(Duration.ofSeconds(30))
            .untilAsserted(() -> assertThat(ListeningSockets.of(self))
                .as("this process serves the file (lock file: %s)", readOrWhy(lockFile))
                .anyMatch(l -> l.port() == LockFilePort.of(lockFile)));
        H2OutboxStore store = H2OutboxStore.create(db);
        for (CommandId id : accepted) {
          assertThat(store.find(id)).as("accept %s", id).isPresent();
        }
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM app_row")) {
          rs.next();
          assertThat(rs.getInt(1)).as("rows of the transaction the close rolled back").isZero();
        }
      }
      server.send("exit");
      assertThat(server.waitForExit(CHILD)).isZero();
    }
  }

  /**
   * Two databases of this JVM on one file that this process serves, another process connected
   * through it: closing the first ends nobody's session, since the second still uses the file
   * (this process keeps serving on the same port, and the second accepts); closing the second,
   * the last one here, closes the file for the other process too.
   */
  @Test
  void closingOneOfTwoDatabasesOfThisJvmKeepsServingTheFile() throws Exception {
    assumeTrue(ListeningSockets.available(), "needs Linux /proc");
    Path file = dir.resolve("shared");
    Path lockFile = dir.resolve("shared.lock.db");
    long self = ProcessHandle.current().pid();
    try (H2Database first = H2Database.open(file)) {
      H2OutboxStore.create(first); // this process opened the file: it serves it
      try (ChildJvm other = ServeFileChild.serving(file, dir.resolve("other.err"))) {
        H2Database second = H2Database.open(file);
        int port = LockFilePort.of(lockFile);
        assertThat(ListeningSockets.of(self)).anyMatch(l -> l.port() == port);

        first.close();
        assertThat(ListeningSockets.of(self)).as("serving after the first of two closed")
            .anyMatch(l -> l.port() == port);
        assertThat(LockFilePort.of(lockFile)).isEqualTo(port);
        Outbox.builder(H2OutboxStore.create(second)).build()
            .accept(OutboxCommand.of("op", "e", Map.of("n", 1)));

        second.close();
        assertThat(ListeningSockets.of(self)).as("serving after the last one here closed")
            .noneMatch(l -> l.port() == port);
        other.send("close");
        assertThat(other.nextLine(CHILD)).as(other.stderrText()).isEqualTo("CLOSED");
        assertThat(other.waitForExit(CHILD)).isZero();
      }
    }
  }

  private static String readOrWhy(Path file) {
    try {
      return java.nio.file.Files.readString(file);
    } catch (java.io.IOException e) {
      return e.toString();
    }
  }
}
