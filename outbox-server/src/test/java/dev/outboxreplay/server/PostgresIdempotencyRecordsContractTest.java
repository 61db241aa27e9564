package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.testkit.IdempotencyRecordStoreContract;
import dev.outboxreplay.testkit.LoopbackPostgres;
import dev.outboxreplay.testkit.ListeningSockets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The receiver's records on a real PostgreSQL on loopback, each node with its own connection
 * pool to one fresh database per test, as separate receiver processes would have.
 */
class PostgresIdempotencyRecordsContractTest extends IdempotencyRecordStoreContract<Connection> {
  private static LoopbackPostgres postgres;
  private final List<HikariDataSource> pools = new ArrayList<>();
  private String database;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = LoopbackPostgres.start();
  }

  @AfterAll
  static void stopPostgres() throws Exception {
    postgres.close();
  }

  @Test
  void thePostgresTheTestsStartListensOnLoopbackOnly() throws Exception {
    Assumptions.assumeTrue(ListeningSockets.available(), "reads /proc (Linux)");
    List<ListeningSockets.Listener> listening = ListeningSockets.of(postgres.serverPid());
    assertThat(listening).isNotEmpty().allSatisfy(l -> {
      assertThat(l.address().isLoopbackAddress()).as("%s", l).isTrue();
      assertThat(l.port()).isEqualTo(postgres.port());
    });
  }

  @Override
  protected IdempotencyRecordStore<Connection> openStore(Path directory, String node) {
    try {
      if (database == null) {
        database = postgres.newDatabase();
        try (HikariDataSource setup = postgres.pool(database, 1);
            Connection c = setup.getConnection(); Statement s = c.createStatement()) {
          s.execute("CREATE TABLE contract_effect (what VARCHAR(100) NOT NULL)");
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    HikariDataSource pool = postgres.pool(database, 8);
    pools.add(pool);
    return JdbcIdempotencyRecords.onPostgres(pool, node, LEASE);
  }

  @Override
  protected void closeAll() {
    pools.forEach(HikariDataSource::close);
    pools.clear();
    database = null;
  }

  @Override
  protected void writeEffect(Connection transaction, String what) throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(
        "INSERT INTO contract_effect (what) VALUES (?)")) {
      ps.setString(1, what);
      ps.executeUpdate();
    }
  }

  @Override
  protected long effects(String what) {
    try (Connection c = pools.get(0).getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*) FROM contract_effect WHERE what = ?")) {
      ps.setString(1, what);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
