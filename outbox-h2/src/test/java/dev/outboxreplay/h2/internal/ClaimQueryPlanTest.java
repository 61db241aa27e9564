package dev.outboxreplay.h2.internal;

import dev.outboxreplay.jdbc.internal.LeaseRecovery;
import dev.outboxreplay.jdbc.internal.OutboxTables;
import dev.outboxreplay.jdbc.internal.OutboxRetention;
import dev.outboxreplay.jdbc.internal.OutboxCounts;
import dev.outboxreplay.jdbc.internal.OutboxAuditSql;
import dev.outboxreplay.jdbc.internal.OutboxSql;
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
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claiming reads the claim index range only: never the terminal rows, and never the backlog
 * queued behind an entity whose head is in flight.
 */
class ClaimQueryPlanTest {
  @TempDir Path dir;
  final ManualClock clock = ManualClock.startingAtEpoch2026();
  H2Database db;
  H2OutboxStore store;
  Outbox<Connection> outbox;

  @BeforeEach
  void open() {
    db = H2Database.open(dir.resolve("outbox"));
    store = H2OutboxStore.create(db);
    outbox = Outbox.builder(store).clock(clock).build();
  }

  @AfterEach
  void close() {
    db.close();
  }

  @Test
  void claimQueryUsesTheClaimIndexAndDoesNotScanTerminalRows() throws Exception {
    acceptEach(2_000, i -> "done-" + i);
    ackEverythingDue();
    for (int i = 0; i < 3; i++) {
      outbox.accept(OutboxCommand.of("op", "open-" + i, Map.of("n", i)));
    }

    assertThat(outerScanCount(clock.millis())).isLessThanOrEqualTo(4);
    assertThat(store.countByStatus().get(Status.ACKED)).isEqualTo(2_000);
  }

  @Test
  void backlogBehindABusyEntityIsNotReadByTheClaim() throws Exception {
    List<OutboxRecord> accepted = acceptEach(2_000, i -> "one-entity");
    outbox.accept(OutboxCommand.of("op", "other-entity", Map.of("n", 0)));

    List<OutboxRecord> first = store.claim("r", Duration.ofMinutes(1), 10, clock.instant());
    assertThat(first).extracting(OutboxRecord::entityKey)
        .containsExactly("one-entity", "other-entity");
    assertThat(first.get(0).commandId()).isEqualTo(accepted.get(0).commandId());
    // That claim met the backlog and cleared its flags: 1,999 rows wait behind the head in
    // flight, and no later claim reads them.
    assertThat(outerScanCount(clock.millis())).isLessThanOrEqualTo(2);
    assertThat(store.claim("r", Duration.ofMinutes(1), 10, clock.instant())).isEmpty();

    store.complete(first.get(0).commandId(), first.get(0).fencingToken(), Status.CLAIMED,
        Outcome.acked(null), clock.instant());
    List<OutboxRecord> next = store.claim("r", Duration.ofMinutes(1), 10, clock.instant());
    assertThat(next).extracting(OutboxRecord::commandId)
        .containsExactly(accepted.get(1).commandId());

    // Passing the head on reads one entry of the entity's index, not its 1,998-row backlog.
    String plan = explainAnalyze(OutboxSql.PROMOTE_NEXT_HEAD,
        ps -> ps.setString(1, "one-entity"));
    assertThat(scanCounts(plan)).as(plan).isNotEmpty().allMatch(n -> n <= 2);
  }

  @Test
  void pruningTheAuditReadsOnlyTheEntriesItDeletesAndOneMore() throws Exception {
    acceptEach(1_000, i -> "e-" + i);
    store.claim("r", Duration.ofMinutes(1), 1_000, clock.instant()); // 1,000 audit entries
    long cutoff = clock.millis() + 1;
    clock.advance(Duration.ofSeconds(1));
    // every lease ends: 1,000 more entries, all newer than the cutoff
    assertThat(store.recoverExpiredLeases(clock.instant().plus(Duration.ofMinutes(2))))
        .hasSize(1_000);

    // Nothing older than the first entry: a row or two read, not the 2,000.
    assertThat(pruneScanCounts(cutoff - 10_000)).allMatch(n -> n <= 2);
    // The 1,000 old entries and the first newer one or two, not the 1,000 after them.
    assertThat(pruneScanCounts(cutoff)).allMatch(n -> n <= 1_002);
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

  @Test
  void leaseRecoveryReadsExpiredLeasesOnlyNotTheBacklogBehindHeadsNorTerminalRows()
      throws Exception {
    acceptEach(2_000, i -> i < 3 ? "entity-" + i : "backlog");
    List<OutboxRecord> held = store.claim("r", Duration.ofSeconds(30), 4, clock.instant());
    assertThat(store.claim("r", Duration.ofSeconds(30), 10, clock.instant()))
        .as("this claim meets the backlog and clears its head flags").isEmpty();
    store.markSending(held.get(0).commandId(), held.get(0).fencingToken(),
        clock.instant().plusSeconds(30), clock.instant());
    // 1 sending and 3 claimed leases ended; the backlog's 1,996 rows wait behind its claimed head
    clock.advance(Duration.ofMinutes(1));
    assertThat(recoveryScanCounts()).allMatch(n -> n <= 5);
    assertThat(store.recoverExpiredLeases(clock.instant())).hasSize(4);
    assertThat(store.countByStatus().get(Status.UNKNOWN)).isEqualTo(1);
    assertThat(store.countByStatus().get(Status.QUEUED)).isEqualTo(2_000 - 1);
  }

  @Test
  void leaseRecoveryDoesNotReadDueQueuedRows() throws Exception {
    // 2,000 entities, each with one due queued row: every one is a due head of the claim index
    acceptEach(2_000, i -> "entity-" + i);
    List<OutboxRecord> held = store.claim("r", Duration.ofSeconds(30), 3, clock.instant());
    store.markSending(held.get(0).commandId(), held.get(0).fencingToken(),
        clock.instant().plusSeconds(30), clock.instant());
    clock.advance(Duration.ofMinutes(1));
    // 1 sending and 2 claimed leases ended, beside 1,997 due queued rows
    List<Long> scans = recoveryScanCounts();
    System.out.printf("lease recovery read %s index rows beside 1,997 due queued rows%n", scans);
    assertThat(scans).allMatch(n -> n <= 3);
    assertThat(store.recoverExpiredLeases(clock.instant())).hasSize(3);
    assertThat(store.countByStatus().get(Status.UNKNOWN)).isEqualTo(1);
    assertThat(store.countByStatus().get(Status.QUEUED)).isEqualTo(2_000 - 1);
  }

  @Test
  void statusCountsAndTheOldestOpenRowDoNotReadAckedRows() throws Exception {
    acceptEach(3_000, i -> "entity-" + i);
    try (Connection c = db.dataSource().getConnection()) {  // 2,990 rows of acked history
      // the first 2,990 by seq (an IN over a LIMIT subquery took H2 about 15 s here)
      c.createStatement().executeUpdate("UPDATE outbox_command SET status = 'acked', "
          + "entity_head = FALSE WHERE seq <= (SELECT seq FROM outbox_command ORDER BY seq "
          + "LIMIT 1 OFFSET 2989)");
      c.createStatement().executeUpdate("UPDATE outbox_command SET status = 'rejected' "
          + "WHERE seq IN (SELECT seq FROM outbox_command WHERE status = 'queued' "
          + "ORDER BY seq LIMIT 2)");
    }
    List<OutboxRecord> held = store.claim("r", Duration.ofSeconds(30), 3, clock.instant());
    store.markSending(held.get(0).commandId(), held.get(0).fencingToken(),
        clock.instant().plusSeconds(30), clock.instant());

    Map<Status, Long> counts = store.countByStatus();
    assertThat(counts).isEqualTo(groupByStatus()).containsEntry(Status.ACKED, 2_990L)
        .containsEntry(Status.REJECTED, 2L).containsEntry(Status.SENDING, 1L)
        .containsEntry(Status.CLAIMED, 2L).containsEntry(Status.QUEUED, 5L)
        .containsEntry(Status.CONFLICT, 0L);
    String plan = explainAnalyze(OutboxCounts.COUNT_BY_STATUS, ps -> { });
    assertThat(plan).as(plan).doesNotContainIgnoringCase("tableScan");
    long read = scanCounts(plan).stream().mapToLong(Long::longValue).sum();
    System.out.printf("status counts read %d index rows beside 2,990 acked rows%n", read);
    assertThat(read).as(plan).isLessThanOrEqualTo(10 + Status.values().length);

    plan = explainAnalyze(OutboxCounts.oldestOpen(H2Dialect.INSTANCE), ps -> { });
    assertThat(plan).as(plan).contains("IDX_OUTBOX_CLAIM").doesNotContainIgnoringCase("tableScan");
    assertThat(scanCounts(plan)).as(plan).isNotEmpty().allMatch(n -> n <= 9);
    assertThat(store.oldestOpenAcceptedAt()).contains(clock.instant());
  }

  @Test
  void historyRetentionReadsOnlyTheRowsThatEndedBeforeItsCutoff() throws Exception {
    acceptEach(10, i -> "old-" + i);
    ackEverythingDue();
    java.time.Instant oldEnd = clock.instant();
    clock.advance(Duration.ofDays(2));
    acceptEach(1_990, i -> "recent-" + i);
    ackEverythingDue();
    long dayAgo = clock.millis() - Duration.ofDays(1).toMillis();

    // 10 rows ended two days ago, 1,990 just now: the tombstone pass reads the 10 (and at most
    // one more), not the history after them
    List<Long> scans = retentionScanCounts(OutboxTables.ENDED, dayAgo);
    System.out.printf("tombstone pass read %s index rows beside 1,990 recent ended rows%n", scans);
    assertThat(scans).allMatch(n -> n <= 11);
    assertThat(store.tombstoneEnded(java.time.Instant.ofEpochMilli(dayAgo), clock.instant()))
        .isEqualTo(10);
    assertThat(retentionScanCounts(OutboxTables.ENDED, dayAgo)).allMatch(n -> n <= 1);

    // the deletion reads the tombstones due, not the 1,990 whole rows
    assertThat(retentionScanCounts(OutboxTables.TOMBSTONED, oldEnd.toEpochMilli() - 1))
        .allMatch(n -> n <= 1);
    assertThat(retentionScanCounts(OutboxTables.TOMBSTONED, dayAgo)).allMatch(n -> n <= 11);
    assertThat(store.deleteTombstones(java.time.Instant.ofEpochMilli(dayAgo))).isEqualTo(10);
    assertThat(store.countByStatus().get(Status.ACKED)).isEqualTo(1_990);
  }

  /** Claims and acks every due row at the clock's time. */
  private void ackEverythingDue() {
    List<OutboxRecord> held;
    while (!(held = store.claim("r", Duration.ofMinutes(1), 500, clock.instant())).isEmpty()) {
      for (OutboxRecord r : held) {
        store.complete(r.commandId(), r.fencingToken(), Status.CLAIMED, Outcome.acked(null),
            clock.instant());
      }
    }
  }

  /** Runs one retention read (terminal rows at {@code base}) under EXPLAIN ANALYZE. */
  private List<Long> retentionScanCounts(long base, long endedBefore) throws Exception {
    String plan = explainAnalyze(OutboxRetention.ended(H2Dialect.INSTANCE), ps -> {
      ps.setLong(1, base);
      ps.setLong(2, base + endedBefore);
    });
    assertThat(plan).as(plan).contains("IDX_OUTBOX_CLAIM").doesNotContainIgnoringCase("tableScan");
    List<Long> counts = scanCounts(plan);
    assertThat(counts).as(plan).isNotEmpty();
    return counts;
  }

  /** Status counts the plain way, a full scan: what the counts must equal. */
  private Map<Status, Long> groupByStatus() throws SQLException {
    Map<Status, Long> counts = new java.util.EnumMap<>(Status.class);
    for (Status s : Status.values()) {
      counts.put(s, 0L);
    }
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT status, COUNT(*) FROM outbox_command GROUP BY status")) {
      while (rs.next()) {
        counts.put(Status.fromWireName(rs.getString(1)), rs.getLong(2));
      }
    }
    return counts;
  }

  /**
   * Runs the expired-lease read for both leased statuses under EXPLAIN ANALYZE; it must read the
   * status index. (Each row it finds is then recovered by a fenced update by id.)
   */
  private List<Long> recoveryScanCounts() throws Exception {
    List<Long> counts = new ArrayList<>();
    for (Status leased : List.of(Status.SENDING, Status.CLAIMED)) {
      String plan = explainAnalyze(LeaseRecovery.EXPIRED, ps -> {
        ps.setString(1, leased.wireName());
        ps.setLong(2, clock.millis());
      });
      assertThat(plan).contains("IDX_OUTBOX_STATUS").doesNotContainIgnoringCase("tableScan");
      List<Long> scans = scanCounts(plan);
      assertThat(scans).as(plan).isNotEmpty();
      counts.addAll(scans);
    }
    return counts;
  }

  /** Accepts {@code count} commands, the {@code i}-th on entity {@code entityOf.apply(i)}. */
  private List<OutboxRecord> acceptEach(int count, IntFunction<String> entityOf) {
    List<OutboxCommand> commands = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      commands.add(OutboxCommand.of("op", entityOf.apply(i), Map.of("n", i)));
    }
    return outbox.acceptAll(commands);
  }

  /**
   * Runs the audit prune under EXPLAIN ANALYZE (which deletes) and returns the scan counts H2
   * reports; it must never scan the table.
   */
  private List<Long> pruneScanCounts(long before) throws Exception {
    String plan = explainAnalyze(OutboxAuditSql.PRUNE, ps -> {
      ps.setLong(1, before);
      ps.setLong(2, before);
    });
    assertThat(plan).doesNotContainIgnoringCase("tableScan");
    List<Long> counts = scanCounts(plan);
    assertThat(counts).as(plan).isNotEmpty();
    return counts;
  }

  /** Rows the claim query read from its index, from H2's EXPLAIN ANALYZE. */
  private long outerScanCount(long now) throws Exception {
    String plan = explainAnalyze(OutboxSql.candidates(H2Dialect.INSTANCE), ps -> {
      ps.setLong(1, now);
      ps.setInt(2, 100);
    });
    assertThat(plan).contains("PUBLIC.IDX_OUTBOX_CLAIM: CLAIM_DUE <= ").contains("index sorted");
    assertThat(plan).doesNotContainIgnoringCase("tableScan");
    List<Long> counts = scanCounts(plan);
    assertThat(counts).as(plan).isNotEmpty();
    long outerScan = counts.get(0);
    System.out.printf("claim query read %d index rows%n", outerScan);
    return outerScan;
  }

  /** Every {@code scanCount} in an H2 plan, outermost first. */
  private static List<Long> scanCounts(String plan) {
    List<Long> counts = new ArrayList<>();
    Matcher scans = Pattern.compile("scanCount: (\\d+)").matcher(plan);
    while (scans.find()) {
      counts.add(Long.parseLong(scans.group(1)));
    }
    return counts;
  }

  /** Binds a statement's parameters. */
  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Runs {@code sql} under EXPLAIN ANALYZE (so it takes effect) and returns H2's plan. */
  private String explainAnalyze(String sql, Binder parameters) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("EXPLAIN ANALYZE " + sql)) {
      parameters.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }
}
