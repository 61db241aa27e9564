package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.testkit.LoopbackPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The receiver's schema on a real PostgreSQL when nodes start together on an empty database,
 * and when a node meets a schema newer than its release.
 */
class PostgresMigrationsTest {
  private static final int NODES = 12;
  private static LoopbackPostgres postgres;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = LoopbackPostgres.shared();
  }

  @Test
  void nodesThatStartTogetherOnAnEmptyDatabaseEachFindTheSchemaMadeOnce() throws Exception {
    String database = postgres.newDatabase();
    List<HikariDataSource> pools = new ArrayList<>();
    ExecutorService starting = Executors.newFixedThreadPool(NODES);
    try {
      for (int i = 0; i < NODES; i++) {
        pools.add(postgres.pool(database, 2));
      }
      for (HikariDataSource pool : pools) {
        pool.getConnection().close(); // connected before the gate, so the starts overlap
      }
      CyclicBarrier gate = new CyclicBarrier(NODES);
      List<Future<String>> nodes = new ArrayList<>();
      for (int i = 0; i < NODES; i++) {
        HikariDataSource pool = pools.get(i);
        String name = "node-" + i;
        nodes.add(starting.submit(() -> {
          gate.await(30, TimeUnit.SECONDS);
          NotesApplication.onPostgres(pool);
          return JdbcIdempotencyRecords.onPostgres(pool, name, Duration.ofSeconds(30)).node();
        }));
      }
      for (int i = 0; i < NODES; i++) {
        assertThat(nodes.get(i).get(60, TimeUnit.SECONDS)).isEqualTo("node-" + i);
      }
      assertThat(history(pools.get(0))).as("each step of each component recorded once")
          .containsExactly("notes-app 1", "server 1");
      assertThat(JdbcIdempotencyRecords.onPostgres(pools.get(0), "node-0",
          Duration.ofSeconds(30)).count()).isZero();
    } finally {
      starting.shutdownNow();
      pools.forEach(HikariDataSource::close);
    }
  }

  @Test
  void aSchemaNewerThanTheReleaseIsRefusedNamingBothVersionsAndLeftAsItIs() throws Exception {
    try (HikariDataSource pool = postgres.pool(postgres.newDatabase(), 2)) {
      JdbcIdempotencyRecords.onPostgres(pool, "node-1", Duration.ofSeconds(30));
      try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
        s.execute("INSERT INTO server_schema_history (component, version, description) "
            + "VALUES ('server', 7, 'a later release')");
      }
      assertThatThrownBy(() -> JdbcIdempotencyRecords.onPostgres(pool, "node-1",
          Duration.ofSeconds(30)))
          .isInstanceOf(OutboxStorageException.class)
          .hasMessageContaining("schema version 7")
          .hasMessageContaining("newer than this release's 1");
      assertThat(history(pool)).containsExactly("server 1", "server 7");
    }
  }

  private static List<String> history(HikariDataSource pool) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = pool.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT component, version FROM server_schema_history "
            + "ORDER BY component, version")) {
      while (rs.next()) {
        rows.add(rs.getString(1) + " " + rs.getInt(2));
      }
    }
    return rows;
  }
}
