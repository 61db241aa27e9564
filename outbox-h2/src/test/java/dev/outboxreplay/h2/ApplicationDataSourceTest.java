package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.PoolOpener;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application hands in its own pool: the stores use it, a local change and its outbox row
 * commit in one of its transactions, closing the library leaves the pool open, a pool whose
 * commits are not durable on return is refused naming the setting, and one whose H2 compacts the
 * file while closing it gets a warning naming that setting.
 */
class ApplicationDataSourceTest {
  @TempDir Path dir;

  @Test
  void theStoresRunOnTheApplicationsPoolAndLeaveItOpen() throws Exception {
    try (HikariDataSource appPool = pool("jdbc:h2:file:" + dir.resolve("app")
        + ";WRITE_DELAY=0")) {
      try (Connection c = appPool.getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE note (id VARCHAR(20) PRIMARY KEY, body VARCHAR(100))");
      }
      try (H2Database db = H2Database.builder().dataSource(appPool).build()) {
        assertThat(db.file()).isEqualTo(dir.resolve("app.mv.db").toAbsolutePath());
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
        try (Connection tx = appPool.getConnection()) {
          tx.setAutoCommit(false);
          try (PreparedStatement ps = tx.prepareStatement("INSERT INTO note VALUES (?, ?)")) {
            ps.setString(1, "n-1");
            ps.setString(2, "hello");
            ps.executeUpdate();
          }
          outbox.accept(tx, OutboxCommand.of("note.put", "n-1", Map.of("body", "hello")));
          tx.commit();
        }
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
      try (H2Database db = H2Database.builder().dataSource(lazy).allowWriteDelay(true).build()) {
        assertThat(H2OutboxStore.create(db).countByStatus()).containsEntry(Status.QUEUED, 0L);
      }
    }
    try (HikariDataSource memory = pool("jdbc:h2:mem:outbox-test")) {
      assertThatThrownBy(() -> H2Database.builder().dataSource(memory).build())
          .isInstanceOf(OutboxStorageException.class).hasMessageContaining("in-memory");
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
