package dev.outboxreplay.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.jdbc.internal.OutboxCounts;
import dev.outboxreplay.jdbc.internal.OutboxRetention;
import dev.outboxreplay.jdbc.internal.OutboxSql;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a user's SQLite file (no {@code ANALYZE} statistics, a backlog queued), the statements that
 * read a range of the outbox read it through the index meant for it: the claim walks the claim
 * index in its order and stops at its limit. Without the hint SQLite's planner chose the status
 * index and sorted the whole backlog on every claim (96 ms per claim of 8 with 100,000 commands
 * queued, 1.5 ms with the hint).
 */
class SqliteQueryPlanTest {
  @TempDir Path dir;

  @Test
  void rangeReadsUseTheirIndexAndTheClaimSortsNothing() throws SQLException {
    try (SqliteDatabase db = SqliteDatabase.open(dir.resolve("app.db"))) {
      JdbcOutboxStore store = JdbcOutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      List<OutboxCommand> backlog = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        backlog.add(OutboxCommand.of("op", "e" + (i % 50), Map.of("n", i)));
      }
      outbox.acceptAll(backlog);
      try (Connection c = db.dataSource().getConnection()) {
        assertThat(plan(c, OutboxSql.candidates(db.dialect())))
            .as("claim candidates")
            .anySatisfy(step -> assertThat(step).startsWith("SEARCH c USING INDEX "
                + "idx_outbox_claim"))
            .noneSatisfy(step -> assertThat(step).contains("TEMP B-TREE"))
            .noneSatisfy(step -> assertThat(step).contains("idx_outbox_status"));
        assertThat(plan(c, OutboxCounts.oldestOpen(db.dialect()))).as("oldest open")
            .anySatisfy(step -> assertThat(step).contains("USING INDEX idx_outbox_claim"));
        assertThat(plan(c, OutboxRetention.ended(db.dialect()))).as("retention batch")
            .anySatisfy(step -> assertThat(step).startsWith(
                "SEARCH outbox_command USING INDEX idx_outbox_claim"))
            .noneSatisfy(step -> assertThat(step).contains("TEMP B-TREE"));
        try (Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM sqlite_master "
                + "WHERE name = 'sqlite_stat1'")) {
          rs.next();
          assertThat(rs.getInt(1)).as("no ANALYZE statistics: the planner's defaults")
              .isZero();
        }
      }
    }
  }

  private static List<String> plan(Connection c, String sql) throws SQLException {
    List<String> steps = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("EXPLAIN QUERY PLAN " + sql.replace("?", "1"))) {
      while (rs.next()) {
        steps.add(rs.getString(4));
      }
    }
    return steps;
  }
}
