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

/**
 * Claiming reads the claim index range only: never the terminal rows, and never the backlog
 * queued behind an entity whose head is in flight.
 */
class ClaimQueryPlanTest {
  @TempDir Path dir;

  @Test
  void claimQueryUsesTheClaimIndexAndDoesNotScanTerminalRows() throws Exception {
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

      assertThat(outerScanCount(db, clock.millis())).isLessThanOrEqualTo(4);
      assertThat(store.countByStatus().get(Status.ACKED)).isEqualTo(2_000);
    }
  }

  @Test
  void backlogBehindABusyEntityIsNotReadByTheClaim() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.open(dir.resolve("backlog"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      List<OutboxCommand> backlog = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        backlog.add(OutboxCommand.of("op", "one-entity", Map.of("n", i)));
      }
      List<OutboxRecord> accepted = outbox.acceptAll(backlog);
      outbox.accept(OutboxCommand.of("op", "other-entity", Map.of("n", 0)));

      List<OutboxRecord> first = store.claim("r", Duration.ofMinutes(1), 10, clock.instant());
      assertThat(first).extracting(OutboxRecord::entityKey)
          .containsExactly("one-entity", "other-entity");
      assertThat(first.get(0).commandId()).isEqualTo(accepted.get(0).commandId());
      // That claim met the backlog and cleared its flags: 1,999 rows wait behind the head in
      // flight, and no later claim reads them.
      assertThat(outerScanCount(db, clock.millis())).isLessThanOrEqualTo(2);
      assertThat(store.claim("r", Duration.ofMinutes(1), 10, clock.instant())).isEmpty();

      store.complete(first.get(0).commandId(), first.get(0).fencingToken(), Status.CLAIMED,
          Outcome.acked(null), clock.instant());
      List<OutboxRecord> next = store.claim("r", Duration.ofMinutes(1), 10, clock.instant());
      assertThat(next).extracting(OutboxRecord::commandId)
          .containsExactly(accepted.get(1).commandId());

      // Passing the head on reads one entry of the entity's index, not its 1,998-row backlog.
      try (Connection c = db.dataSource().getConnection();
          PreparedStatement ps = c.prepareStatement(
              "EXPLAIN ANALYZE " + OutboxSql.PROMOTE_NEXT_HEAD)) {
        ps.setString(1, "one-entity");
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          String plan = rs.getString(1);
          Matcher scans = Pattern.compile("scanCount: (\\d+)").matcher(plan);
          int found = 0;
          while (scans.find()) {
            found++;
            assertThat(Long.parseLong(scans.group(1))).as(plan).isLessThanOrEqualTo(2);
          }
          assertThat(found).as(plan).isPositive();
        }
      }
    }
  }

  @Test
  void pruningTheAuditReadsOnlyTheEntriesItDeletesAndOneMore() throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.open(dir.resolve("audit"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      List<OutboxCommand> commands = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        commands.add(OutboxCommand.of("op", "e-" + i, Map.of("n", i)));
      }
      outbox.acceptAll(commands);
      store.claim("r", Duration.ofMinutes(1), 1_000, clock.instant()); // 1,000 audit entries
      long cutoff = clock.millis() + 1;
      clock.advance(Duration.ofSeconds(1));
      store.claim("r", Duration.ofMinutes(1), 1_000, clock.instant().plus(Duration.ofMinutes(2)));

      // Nothing older than the first entry: a row or two read, not the 2,000.
      assertThat(pruneScanCounts(db, cutoff - 10_000)).allMatch(n -> n <= 2);
      // The 1,000 old entries and the first newer one or two, not the 1,000 after them.
      assertThat(pruneScanCounts(db, cutoff)).allMatch(n -> n <= 1_002);
      // EXPLAIN ANALYZE ran the delete: exactly the newer half is left
      try (Connection c = db.dataSource().getConnection();
          ResultSet rs = c.createStatement().executeQuery(
              "SELECT COUNT(*), MIN(at) FROM outbox_audit")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(1_000);
        assertThat(rs.getLong(2)).isGreaterThanOrEqualTo(cutoff);
      }
      assertThat(store.pruneAudit(java.time.Instant.ofEpochMilli(cutoff))).isZero();
    }
  }

  /**
   * Runs the audit prune under EXPLAIN ANALYZE (which deletes) and returns the scan counts H2
   * reports; it must never scan the table.
   */
  private static List<Long> pruneScanCounts(H2Database db, long before) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("EXPLAIN ANALYZE " + OutboxSql.PRUNE_AUDIT)) {
      ps.setLong(1, before);
      ps.setLong(2, before);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        String plan = rs.getString(1);
        assertThat(plan).doesNotContainIgnoringCase("tableScan");
        List<Long> counts = new ArrayList<>();
        Matcher scans = Pattern.compile("scanCount: (\\d+)").matcher(plan);
        while (scans.find()) {
          counts.add(Long.parseLong(scans.group(1)));
        }
        assertThat(counts).as(plan).isNotEmpty();
        return counts;
      }
    }
  }

  /** Rows the claim query read from its index, from H2's EXPLAIN ANALYZE. */
  private static long outerScanCount(H2Database db, long now) throws Exception {
    String plan = explain(db, "EXPLAIN ANALYZE " + OutboxSql.CANDIDATES, now);
    assertThat(plan).contains("PUBLIC.IDX_OUTBOX_CLAIM: CLAIM_DUE <= ").contains("index sorted");
    assertThat(plan).doesNotContainIgnoringCase("tableScan");
    Matcher scans = Pattern.compile("scanCount: (\\d+)").matcher(plan);
    assertThat(scans.find()).as(plan).isTrue();
    long outerScan = Long.parseLong(scans.group(1));
    System.out.printf("claim query read %d index rows%n", outerScan);
    return outerScan;
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
