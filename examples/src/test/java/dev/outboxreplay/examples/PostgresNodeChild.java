package dev.outboxreplay.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.JdbcIdempotencyRecords;
import dev.outboxreplay.server.NotesApplication;
import java.time.Duration;
import java.util.SplittableRandom;

/**
 * Child process: one receiver node of the reference notes application on a shared PostgreSQL,
 * on a free loopback port it prints as {@code PORT n}; it closes the connection without an
 * answer after committing {@code dropPercent}% of first requests (seeded), and serves until
 * stdin closes or it is killed. Arguments: JDBC URL, node name, drop percent, seed.
 */
public final class PostgresNodeChild {
  private PostgresNodeChild() {}

  public static void main(String[] args) throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[0]);
    config.setUsername("postgres");
    config.setMaximumPoolSize(12);
    config.setPoolName(args[1]);
    int dropPercent = Integer.parseInt(args[2]);
    SplittableRandom random = new SplittableRandom(Long.parseLong(args[3]));
    try (HikariDataSource pool = new HikariDataSource(config)) {
      NotesApplication notes = NotesApplication.onPostgres(pool);
      FaultPlan drops = request -> {
        synchronized (random) {
          return random.nextInt(100) < dropPercent ? FaultPlan.Fault.dropResponseAfterCommit()
              : FaultPlan.Fault.NONE;
        }
      };
      try (IdempotentServer server = IdempotentServer.builder()
          .records(JdbcIdempotencyRecords.onPostgres(pool, args[1], Duration.ofSeconds(10)))
          .handler(NotesApplication.OPERATION, notes.handler())
          .faults(drops)
          .threads(16)
          .start()) {
        System.out.println("PORT " + server.port());
        System.out.flush();
        while (System.in.read() >= 0) {
          // serve until the parent closes stdin
        }
      }
    }
  }
}
