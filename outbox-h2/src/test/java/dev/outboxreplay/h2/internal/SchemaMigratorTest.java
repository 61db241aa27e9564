package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.Migration;
import dev.outboxreplay.jdbc.internal.SchemaMigrator;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which errors a migration runs again through: H2's own errors for DDL another opener is running
 * at the same instant, made by H2 here, against ones that are the file's or the step's fault.
 */
class SchemaMigratorTest {
  private static SQLException errorOf(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:h2:mem:");
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE t (id INT)");
      return catchThrowableOfType(SQLException.class, () -> s.execute(sql));
    }
  }

  /** The error H2 gives {@code sql}, its code, and whether a migration runs again through it. */
  private static void assertRace(String sql, int code, boolean race) throws SQLException {
    SQLException e = errorOf(sql);
    assertThat(e.getErrorCode()).as(sql).isEqualTo(code);
    assertThat(H2Dialect.INSTANCE.isConcurrentSchemaChange(e)).as(sql).isEqualTo(race);
  }

  @Test
  void aTableAnotherOpenerIsStillCreatingIsARace() throws SQLException {
    assertRace("UPDATE missing SET id = 1", 42102, true);
  }

  /** A missing column is reported at once: steps run under the migration lock (below). */
  @Test
  void aStepThatIsWrongOrAMissingColumnIsNot() throws SQLException {
    assertRace("UPDATE t SET first_sent_at = 1", 42122, false);
    assertRace("UPDATE t SET", 42001, false);
    assertRace("INSERT INTO t VALUES ('not a number')", 22018, false);
  }

  /**
   * One migration at a time per file: while another connection holds the migration lock, a
   * migration's steps wait; once it is let go, they run. (Concurrent {@code ADD COLUMN} steps of
   * two processes could leave a table without a column.) A file already up to date takes no lock.
   */
  @Test
  void aMigrationWaitsForTheFilesMigrationLock(@TempDir Path dir) throws Exception {
    List<Migration> steps = List.of(
        new Migration(1, "t", List.of("CREATE TABLE IF NOT EXISTS t (id INT)")),
        new Migration(2, "t.extra", List.of("ALTER TABLE t ADD COLUMN IF NOT EXISTS extra INT")));
    try (H2Database db = H2Database.builder().file(dir.resolve("locked")).multiProcess(false)
        .lockTimeout(Duration.ofSeconds(5)).build()) {
      CompletableFuture<Integer> migrated;
      try (Connection holder = db.dataSource().getConnection()) {
        H2Dialect.holdMigrationLock(holder);
        migrated = CompletableFuture.supplyAsync(() -> SchemaMigrator.migrate(db, "test",
            steps, Clock.systemUTC()));
        int holderSession = sessionId(holder);
        // H2 reports the migration's session as blocked by the holder's: it waits on the lock
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
            .until(() -> sessionsBlockedBy(db, holderSession) > 0);
        assertThat(installed(db)).as("no step ran while the lock was held").isZero();
        assertThat(migrated).isNotDone();
        holder.rollback();
      }
      assertThat(migrated.get()).isEqualTo(2);
      assertThat(installed(db)).isEqualTo(2);
      try (Connection holder = db.dataSource().getConnection()) {
        H2Dialect.holdMigrationLock(holder);
        assertThat(SchemaMigrator.migrate(db, "test", steps, Clock.systemUTC())).as("up to date: no lock taken").isEqualTo(2);
        holder.rollback();
      }
    }
  }

  private static int sessionId(Connection c) throws SQLException {
    try (ResultSet rs = c.createStatement().executeQuery("SELECT SESSION_ID()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static int sessionsBlockedBy(H2Database db, int session) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID = ?")) {
      ps.setInt(1, session);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static int installed(H2Database db) {
    return SchemaMigrator.installedVersion(db, "test");
  }
}
