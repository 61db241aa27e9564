package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.PoolOpener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application hands in its own pool: it is refused unless the application accepts, by name,
 * that the library cannot repair the file after a kill; accepted, the stores use it, a local
 * change and its outbox row commit in one transaction of the library's helper (which runs the
 * after-commit checks itself), the file is compacted on it as on the library's own pool, closing
 * the library leaves the pool open, a pool whose commits are not durable on return is refused
 * naming the setting, and one whose H2 compacts the file while closing it gets a warning naming
 * that setting.
 */
class ApplicationDataSourceTest {
  @TempDir Path dir;

  @Test
  void aPoolIsRefusedNamingTheRepairsItWouldLoseUnlessTheApplicationAcceptsThat() {
    try (HikariDataSource appPool = pool("jdbc:h2:file:" + dir.resolve("app")
        + ";WRITE_DELAY=0")) {
      assertThatThrownBy(() -> H2Database.builder().dataSource(appPool).build())
          .isInstanceOf(OutboxStorageException.class)
          .hasMessageContaining(dir.resolve("app.mv.db").toString())
          .hasMessageContaining("after a process kill H2's own recovery can open it without "
              + "commits that had returned")
          .hasMessageContaining("H2Database.builder().file(...)")
          .hasMessageContaining("withoutCrashRepairs(true)");
    }
  }

  @Test
  void theStoresRunOnTheApplicationsPoolAndLeaveItOpen() throws Exception {
    try (HikariDataSource appPool = pool("jdbc:h2:file:" + dir.resolve("app")
        + ";WRITE_DELAY=0")) {
      try (Connection c = appPool.getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE note (id VARCHAR(20) PRIMARY KEY, body VARCHAR(100))");
      }
      try (H2Database db = H2Database.builder().dataSource(appPool).withoutCrashRepairs(true)
          .build()) {
        assertThat(db.file()).isEqualTo(dir.resolve("app.mv.db").toAbsolutePath());
        assertThat(db.dataSource()).isSameAs(appPool);
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
        db.inTransaction(tx -> {
          try (PreparedStatement ps = tx.prepareStatement("INSERT INTO note VALUES (?, ?)")) {
            ps.setString(1, "n-1");
            ps.setString(2, "hello");
            ps.executeUpdate();
          }
          return outbox.accept(tx, OutboxCommand.of("note.put", "n-1", Map.of("body", "hello")));
        });
        assertThatThrownBy(() -> db.inTransaction(tx -> {
          try (PreparedStatement ps = tx.prepareStatement("INSERT INTO note VALUES (?, ?)")) {
            ps.setString(1, "n-2");
            ps.setString(2, "rolled back");
            ps.executeUpdate();
          }
          outbox.accept(tx, OutboxCommand.of("note.put", "n-2", Map.of("body", "no")));
          throw new IllegalStateException("the application changed its mind");
        })).hasMessage("the application changed its mind");
        assertThat(outbox.store().countByStatus()).containsEntry(Status.QUEUED, 1L);
      }
      assertThat(appPool.isClosed()).as("the application's pool is the application's").isFalse();
      try (Connection c = appPool.getConnection(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM outbox_command")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(1);
      }
    }
  }

  @Test
  void aPoolWhoseCommitsAreNotDurableOnReturnIsRefusedUnlessAllowed() {
    try (HikariDataSource lazy = pool("jdbc:h2:file:" + dir.resolve("lazy"))) { // H2: 500 ms
      assertThatThrownBy(() -> H2Database.builder().dataSource(lazy).build())
          .isInstanceOf(OutboxStorageException.class)
          .hasMessageContaining("WRITE_DELAY 500").hasMessageContaining(";WRITE_DELAY=0");
      try (H2Database db = H2Database.builder().dataSource(lazy).allowWriteDelay(true)
          .withoutCrashRepairs(true).build()) {
        assertThat(H2OutboxStore.create(db).countByStatus()).containsEntry(Status.QUEUED, 0L);
      }
    }
    try (HikariDataSource memory = pool("jdbc:h2:mem:outbox-test")) {
      assertThatThrownBy(() -> H2Database.builder().dataSource(memory).build())
          .isInstanceOf(OutboxStorageException.class).hasMessageContaining("in-memory");
    }
  }

  /**
   * The file is compacted on the application's pool: on demand, and by the schedule while it is
   * open. Before, an application's pool turned compaction off without a word (90.9 MB against
   * 2.9 MB after 2,000 accept-ack cycles and 150 s idle).
   */
  @Test
  void theFileIsCompactedOnTheApplicationsPool() throws Exception {
    try (HikariDataSource appPool = pool("jdbc:h2:file:" + dir.resolve("grown")
        + ";WRITE_DELAY=0;MAX_COMPACT_TIME=0")) {
      long kept;
      long grown; // with no compaction running: the same rows fill the file to this
      try (H2Database db = H2Database.builder().dataSource(appPool).withoutCrashRepairs(true)
          .compaction(false).build()) {
        FileCompactionTest.setRetentionTimeZero(db);
        kept = FileCompactionTest.fillAndThinOut(db);
        grown = Files.size(db.file());
        long shrunk = FileCompactionTest.compactUntilDone(db);
        assertThat(Files.size(db.file())).as("after compactFile(), of %,d", grown)
            .isLessThan(grown / 3).isEqualTo(grown - shrunk);
        assertThat(FileCompactionTest.sumOfKeptRows(db)).isEqualTo(kept);
        try (Connection c = appPool.getConnection(); Statement s = c.createStatement()) {
          s.execute("DROP TABLE blob_row");
        }
      }
      try (H2Database db = H2Database.builder().dataSource(appPool).withoutCrashRepairs(true)
          .compactionInterval(Duration.ofMillis(20)).build()) {
        H2OutboxStore.create(db); // its schema, as in use: the schedule's nudge writes to it
        kept = FileCompactionTest.fillAndThinOut(db);
        // the schedule runs on its own thread (it may well have begun during the fill): polled,
        // bounded, no logic waits on the clock
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
            .untilAsserted(() -> assertThat(Files.size(db.file()))
                .as("compacted by the schedule; uncompacted %,d", grown).isLessThan(grown / 3));
        assertThat(FileCompactionTest.sumOfKeptRows(db)).isEqualTo(kept);
      }
    }
  }

  @Test
  void aPoolWhoseH2CompactsAtCloseGetsAWarningNamingTheSetting() {
    try (HikariDataSource defaults = pool("jdbc:h2:file:" + dir.resolve("defaults")
        + ";WRITE_DELAY=0")) { // H2: MAX_COMPACT_TIME 200 ms
      assertThat(PoolOpener.checkApplicationDataSource(defaults, false).warnings())
          .singleElement().asString().contains("MAX_COMPACT_TIME 200 ms")
          .contains("add ;MAX_COMPACT_TIME=0 to its JDBC URL")
          .contains(dir.resolve("defaults").toString());
    }
    try (HikariDataSource noCompaction = pool("jdbc:h2:file:" + dir.resolve("quiet")
        + ";WRITE_DELAY=0;MAX_COMPACT_TIME=0")) {
      PoolOpener.ApplicationDataSourceCheck check =
          PoolOpener.checkApplicationDataSource(noCompaction, false);
      assertThat(check.warnings()).isEmpty();
      assertThat(check.file()).isEqualTo(dir.resolve("quiet").toAbsolutePath());
    }
  }

  private static HikariDataSource pool(String url) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername("sa");
    config.setPassword("");
    config.setMaximumPoolSize(4);
    return new HikariDataSource(config);
  }
}
