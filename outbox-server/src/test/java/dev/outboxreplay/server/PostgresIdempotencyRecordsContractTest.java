package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.testkit.jdbc.JdbcIdempotencyRecordStoreContract;
import dev.outboxreplay.testkit.LoopbackPostgres;
import dev.outboxreplay.testkit.ListeningSockets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The receiver's records on a real PostgreSQL on loopback, each node with its own connection
 * pool to one fresh database per test, as separate receiver processes would have.
 */
class PostgresIdempotencyRecordsContractTest extends JdbcIdempotencyRecordStoreContract {
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
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    HikariDataSource pool = postgres.pool(database, 8);
    pools.add(pool);
    return JdbcIdempotencyRecords.onPostgres(pool, node, LEASE);
  }

  @Override
  protected DataSource sharedDatabase() {
    return pools.get(0);
  }

  @Override
  protected void closeAll() {
    pools.forEach(HikariDataSource::close);
    pools.clear();
    database = null;
  }
}
