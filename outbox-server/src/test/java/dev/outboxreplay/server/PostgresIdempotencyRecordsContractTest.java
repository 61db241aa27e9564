package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.receiver.Claim;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.receiver.StoredAnswer;
import dev.outboxreplay.testkit.jdbc.JdbcIdempotencyRecordStoreContract;
import dev.outboxreplay.testkit.LoopbackPostgres;
import dev.outboxreplay.testkit.ListeningSockets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
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
    postgres = LoopbackPostgres.shared();
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

  @Test
  void aFirstClaimCommitsWithoutWaitingForItsFlushTheEffectWaitsAndTheSessionKeepsItsSetting()
      throws Exception {
    // one connection, so every statement below runs on it; PostgreSQL's default commit setting
    try (HikariDataSource pool = postgres.pool(postgres.newDatabase(), 1, true)) {
      JdbcIdempotencyRecords records = JdbcIdempotencyRecords.onPostgres(pool, "node-1", LEASE);
      try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
        // PostgreSQL itself notes the setting each write of a record runs under
        s.execute("CREATE TABLE commit_setting (n SERIAL, operation TEXT, setting TEXT)");
        s.execute("CREATE FUNCTION note_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$ "
            + "BEGIN INSERT INTO commit_setting (operation, setting) "
            + "VALUES (TG_OP, current_setting('synchronous_commit')); RETURN NULL; END $$");
        s.execute("CREATE TRIGGER commit_setting AFTER INSERT OR UPDATE ON server_idempotency "
            + "FOR EACH ROW EXECUTE FUNCTION note_commit_setting()");
      }
      Instant now = Instant.parse("2026-03-01T10:00:00Z");
      Claim claim = records.claim("tenant", "key-1", "note.put", new byte[32], now,
          now.plus(Duration.ofDays(7)));
      assertThat(claim).isInstanceOf(Claim.Owned.class);
      records.complete((Claim.Owned) claim,
          tx -> new StoredAnswer(201, "application/json", new byte[] {'{', '}'}), now);
      try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
        List<String> noted = new ArrayList<>();
        try (ResultSet rs = s.executeQuery(
            "SELECT operation || ' ' || setting FROM commit_setting ORDER BY n")) {
          while (rs.next()) {
            noted.add(rs.getString(1));
          }
        }
        assertThat(noted).as("the claim's insert, then the answer's update with the effect")
            .containsExactly("INSERT off", "UPDATE on");
        try (ResultSet rs = s.executeQuery("SHOW synchronous_commit")) {
          rs.next();
          assertThat(rs.getString(1)).as("the claim's setting ended with its transaction")
              .isEqualTo("on");
        }
      }
    }
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
