package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Claiming due work reads the due index range only, never the terminal rows. */
class ClaimQueryPlanTest {
  @TempDir Path dir;

  @Test
  void claimQueryUsesTheDueIndexAndDoesNotScanTerminalRows() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.open(dir.resolve("plan"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      List<OutboxCommand> finished = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        finished.add(OutboxCommand.of("op", "done-" + i, Map.of("n", i)));
      }
      outbox.acceptAll(finished);
      List<OutboxRecord> held;
      while (!(held = store.claim("r", Duration.ofMinutes(1), 500, clock.instant())).isEmpty()) {
        for (OutboxRecord r : held) {
          store.complete(r.commandId(), r.fencingToken(), Status.CLAIMED, Outcome.acked(null),
              clock.instant());
        }
      }
      for (int i = 0; i < 3; i++) {
        outbox.accept(OutboxCommand.of("op", "open-" + i, Map.of("n", i)));
      }

      String plan = explain(db, "EXPLAIN ANALYZE " + OutboxSql.CANDIDATES, clock.millis());
      assertThat(plan).contains("PUBLIC.IDX_OUTBOX_DUE: DUE_AT <= ").contains("index sorted");
      assertThat(plan).doesNotContainIgnoringCase("tableScan");
      Matcher scans = Pattern.compile("scanCount: (\\d+)").matcher(plan);
      assertThat(scans.find()).as(plan).isTrue();
      long outerScan = Long.parseLong(scans.group(1));
      assertThat(outerScan).as("rows read from the due index, plan:%n%s", plan)
          .isLessThanOrEqualTo(4);
      assertThat(store.countByStatus().get(Status.ACKED)).isEqualTo(2_000);
    }
  }

  private static String explain(H2Database db, String sql, long now) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, now);
      ps.setInt(2, 100);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }
}
