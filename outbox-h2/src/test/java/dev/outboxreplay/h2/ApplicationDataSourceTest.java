package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
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
 * commit in one of its transactions, closing the library leaves the pool open, and a pool whose
 * commits are not durable on return is refused naming the setting.
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

  private static HikariDataSource pool(String url) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername("sa");
    config.setPassword("");
    config.setMaximumPoolSize(4);
    return new HikariDataSource(config);
  }
}
