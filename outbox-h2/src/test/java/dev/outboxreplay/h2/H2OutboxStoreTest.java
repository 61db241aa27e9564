package dev.outboxreplay.h2;

import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.internal.OutboxTables;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.InvalidCommandException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.OutboxSchema;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class H2OutboxStoreTest {
  @TempDir Path dir;
  H2Database db;
  H2OutboxStore store;
  Outbox<Connection> outbox;

  @BeforeEach
  void open() {
    db = H2Database.open(dir.resolve("store"));
    store = H2OutboxStore.create(db);
    outbox = Outbox.builder(store).maxPayloadBytes(1024).build();
  }

  @AfterEach
  void close() {
    db.close();
  }

  private long total() {
    return store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
  }

  /** A payload Jackson cannot serialize: its getter throws. */
  public static final class Exploding {
    public String getValue() {
      throw new IllegalStateException("boom");
    }
  }

  @Test
  void badInputGetsAClearErrorNamingTheFieldAndWritesNothing() {
    accept("fine");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of(" ", "e", Map.of())))
        .isInstanceOf(InvalidCommandException.class).hasMessage("command.operation: is blank");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("op", "", Map.of())))
        .hasMessage("command.entityKey: is blank");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("op", null, Map.of())))
        .hasMessage("command.entityKey: is blank");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("op", "e", new Exploding())))
        .isInstanceOf(InvalidCommandException.class)
        .hasMessageContaining("command.payload: cannot be serialized to JSON")
        .hasMessageContaining("boom");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("op", "e", "x".repeat(2000))))
        .hasMessageContaining(
            "command.payload: canonical JSON is 2002 bytes, over the limit of 1024");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.ofJson("op", "e", "{oops")))
        .hasMessageContaining("command.payload: is not valid JSON");
    assertThatThrownBy(() -> outbox.acceptAll(List.of(
        OutboxCommand.of("op", "e", Map.of()), OutboxCommand.of("op", "e\u0007", Map.of()))))
        .hasMessage("commands[1].entityKey: has a control character at index 1");
    assertThatThrownBy(() -> outbox.accept(OutboxCommand.of("o".repeat(201), "e", Map.of())))
        .hasMessageContaining("command.operation: is 201 characters, more than 200");
    for (String notOneSegment : List.of(".", "..", "notes/put", "a b", "%2e%2e", "-x", "_x",
        "note.put?x=1", "note#put", "nöte")) {
      assertThatThrownBy(() -> outbox.accept(OutboxCommand.of(notOneSegment, "e", Map.of())))
          .as("'%s'", notOneSegment).isInstanceOf(InvalidCommandException.class)
          .hasMessageContaining("command.operation: must be one URL path segment");
    }
    assertThatThrownBy(() -> Outbox.builder(store)
        .idempotencyKeyStrategy((op, entity, id) -> "\u00e9").build()
        .accept(OutboxCommand.of("op", "e", Map.of())))
        .hasMessageContaining("command.idempotencyKey: derived key is invalid");
    assertThat(total()).isEqualTo(1);
  }

  @Test
  void aCrashBeforeTheWriteLeavesNothingAndACrashAfterItLeavesTheRowDurable() {
    class Crash extends Error {
      private static final long serialVersionUID = 1L;
    }
    Outbox<Connection> before = Outbox.builder(store).failureInjector(p -> {
      if (p == dev.outboxreplay.FailurePoint.BEFORE_OUTBOX_WRITE) {
        throw new Crash();
      }
    }).build();
    assertThatThrownBy(() -> before.accept(OutboxCommand.of("op", "e", Map.of())))
        .isInstanceOf(Crash.class);
    assertThat(total()).isZero();
    Outbox<Connection> after = Outbox.builder(store).failureInjector(p -> {
      if (p == dev.outboxreplay.FailurePoint.AFTER_OUTBOX_WRITE) {
        throw new Crash();
      }
    }).build();
    assertThatThrownBy(() -> after.accept(OutboxCommand.of("op", "e", Map.of())))
        .isInstanceOf(Crash.class);
    db.close();
    db = H2Database.open(dir.resolve("store"));
    store = H2OutboxStore.create(db);
    assertThat(total()).as("the row committed before the crash point survives a reopen")
        .isEqualTo(1);
  }

  @Test
  void defaultPayloadLimitIsOneMebibyte() {
    Outbox<Connection> defaults = Outbox.builder(store).build();
    String justUnder = "x".repeat(Outbox.DEFAULT_MAX_PAYLOAD_BYTES - 2);
    assertThat(defaults.accept(OutboxCommand.of("op", "big", justUnder)).payload().size())
        .isEqualTo(Outbox.DEFAULT_MAX_PAYLOAD_BYTES);
    assertThatThrownBy(() -> defaults.accept(OutboxCommand.of("op", "big", justUnder + "x")))
        .isInstanceOf(InvalidCommandException.class);
  }

  @Test
  void unknownStatusValueInTheFileIsReportedNamingFileAndCommand() throws Exception {
    OutboxRecord record = accept("odd");
    sql("UPDATE outbox_command SET status = 'parked' WHERE command_id = ?", record);
    assertThatThrownBy(() -> store.find(record.commandId()))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("store.mv.db")
        .hasMessageContaining(record.commandId().toString())
        .hasMessageContaining("unknown status 'parked'");
  }

  @Test
  void payloadAlteredOnDiskIsReportedInsteadOfSent() throws Exception {
    OutboxRecord record = accept("tamper");
    sql("UPDATE outbox_command SET payload = CAST('{\"n\":2}' AS VARBINARY) "
        + "WHERE command_id = ?", record);
    assertThatThrownBy(() -> store.find(record.commandId()))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("does not match its stored SHA-256");
  }

  @Test
  void callerConnectionInAutoCommitModeIsRefusedAndNothingWritten() throws Exception {
    try (Connection c = db.dataSource().getConnection()) {
      assertThatThrownBy(() -> outbox.accept(c, OutboxCommand.of("op", "e", Map.of())))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("setAutoCommit(false)");
    }
    assertThat(total()).isZero();
  }

  @Test
  void localStateAndOutboxRowCommitTogetherInTheCallersTransaction() throws Exception {
    try (Connection c = db.dataSource().getConnection()) {
      c.createStatement().execute("CREATE TABLE note (id VARCHAR PRIMARY KEY, body VARCHAR)");
      c.setAutoCommit(false);
      c.createStatement().execute("INSERT INTO note VALUES ('n1', 'hello')");
      outbox.accept(c, OutboxCommand.of("note.put", "n1", Map.of("body", "hello")));
      c.rollback();
      c.createStatement().execute("INSERT INTO note VALUES ('n1', 'hello again')");
      OutboxRecord kept = outbox.accept(c,
          OutboxCommand.of("note.put", "n1", Map.of("body", "hello again")));
      c.commit();
      var rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM note");
      rs.next();
      assertThat(rs.getInt(1)).isEqualTo(1);
      assertThat(store.list(Status.QUEUED, 10)).containsExactly(kept);
    }
  }

  /** Only that the mode works: whether CHECKPOINT SYNC reached the disk needs a power cut. */
  @Test
  void powerLossModeAcceptsAndReadsBack() {
    try (H2Database synced = H2Database.builder().file(dir.resolve("synced"))
        .durability(Durability.POWER_LOSS_SAFE).build()) {
      H2OutboxStore s = H2OutboxStore.create(synced);
      OutboxRecord r = Outbox.builder(s).build().accept(OutboxCommand.of("op", "e", Map.of()));
      assertThat(s.find(r.commandId())).contains(r);
      assertThat(synced.durability()).isEqualTo(Durability.POWER_LOSS_SAFE);
    }
  }

  private OutboxRecord accept(String entity) {
    return outbox.accept(OutboxCommand.of("op", entity, Map.of("n", 1)));
  }

  private void sql(String statement, OutboxRecord record) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(statement)) {
      ps.setObject(1, record.commandId().value());
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  @Test
  void upgradingAVersion3FileCachesSequenceValuesAndDropsTheAuditTimeIndex() throws Exception {
    Path file = dir.resolve("v3");
    try (H2Database v3 = H2Database.open(file)) {
      v3.migrate(dev.outboxreplay.jdbc.internal.OutboxTables.COMPONENT,
          dev.outboxreplay.h2.internal.OutboxSchema.MIGRATIONS.subList(0, 3));
      assertThat(auditTimeIndexExists(v3)).isTrue();
      assertThat(sequenceCaches(v3)).containsOnly(32L);
    }
    try (H2Database upgraded = H2Database.open(file)) {
      H2OutboxStore.create(upgraded);
      assertThat(auditTimeIndexExists(upgraded)).isFalse();
      assertThat(sequenceCaches(upgraded)).as("seq, audit id, fencing token").hasSize(3)
          .containsOnly((long) dev.outboxreplay.h2.internal.OutboxSchema.SEQUENCE_CACHE);
    }
  }

  @Test
  void upgradingAVersion7FileOrdersTheEndedRowsByEndTimeAndKeepsTheOpenOnesClaimable()
      throws Exception {
    Path file = dir.resolve("v7");
    long now = java.time.Instant.parse("2026-06-01T00:00:00Z").toEpochMilli();
    long day = java.time.Duration.ofDays(1).toMillis();
    try (H2Database v7 = H2Database.open(file)) {
      v7.migrate(OutboxTables.COMPONENT, OutboxSchema.MIGRATIONS.subList(0, 7));
      try (Connection c = v7.dataSource().getConnection();
          PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_command (command_id, "
              + "idempotency_key, operation, entity_key, payload, payload_hash, status, attempt, "
              + "next_attempt_at, fencing_token, session_version, created_at, updated_at, "
              + "schema_version, entity_head, tombstoned_at) VALUES (RANDOM_UUID(), ?, 'op', ?, "
              + "X'7b7d', HASH('SHA-256', X'7b7d'), ?, 0, ?, 1, 0, ?, ?, 1, ?, ?)")) {
        Object[][] rows = {
            // key, entity, status, updated_at, entity_head, tombstoned_at
            {"head", "a", "queued", now - day, true, null},
            {"behind", "a", "queued", now - day, false, null},
            {"ended", "b", "acked", now - 2 * day, false, null},
            {"recent", "c", "acked", now, false, null},
            {"tomb", "d", "rejected", now - 10 * day, false, now - 9 * day}};
        for (Object[] row : rows) {
          ps.setString(1, (String) row[0]);
          ps.setString(2, (String) row[1]);
          ps.setString(3, (String) row[2]);
          ps.setLong(4, (Long) row[3]);
          ps.setLong(5, (Long) row[3]);
          ps.setLong(6, (Long) row[3]);
          ps.setBoolean(7, (Boolean) row[4]);
          ps.setObject(8, row[5]);
          ps.executeUpdate();
        }
      }
    }
    try (H2Database upgraded = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(upgraded);
      assertThat(claimDueByKey(upgraded)).containsExactlyInAnyOrderEntriesOf(Map.of(
          "head", now - day, "behind", OutboxTables.BLOCKED,
          "ended", OutboxTables.ENDED + now - 2 * day, "recent", OutboxTables.ENDED + now,
          "tomb", OutboxTables.TOMBSTONED + now - 10 * day));
      java.time.Instant at = java.time.Instant.ofEpochMilli(now);
      assertThat(store.claim("r", java.time.Duration.ofMinutes(1), 10, at))
          .extracting(r -> r.idempotencyKey().value()).containsExactly("head");
      assertThat(store.tombstoneEnded(at.minus(java.time.Duration.ofDays(1)), at)).isEqualTo(1);
      assertThat(store.deleteTombstones(at.minus(java.time.Duration.ofDays(8)))).isEqualTo(1);
      assertThat(claimDueByKey(upgraded)).containsOnlyKeys("head", "behind", "ended", "recent")
          .containsEntry("ended", OutboxTables.TOMBSTONED + now - 2 * day);
    }
  }

  private static Map<String, Long> claimDueByKey(H2Database db) throws Exception {
    Map<String, Long> due = new java.util.HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        var rs = c.createStatement().executeQuery(
            "SELECT idempotency_key, claim_due FROM outbox_command")) {
      while (rs.next()) {
        due.put(rs.getString(1), rs.getLong(2));
      }
    }
    return due;
  }

  private static boolean auditTimeIndexExists(H2Database db) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        var rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM "
            + "INFORMATION_SCHEMA.INDEXES WHERE INDEX_NAME = 'IDX_OUTBOX_AUDIT_AT'")) {
      rs.next();
      return rs.getLong(1) > 0;
    }
  }

  /** The cache of the outbox's identity columns and of its fencing token sequence. */
  private static List<Long> sequenceCaches(H2Database db) throws Exception {
    List<Long> caches = new java.util.ArrayList<>();
    try (Connection c = db.dataSource().getConnection();
        var rs = c.createStatement().executeQuery("SELECT IDENTITY_CACHE FROM "
            + "INFORMATION_SCHEMA.COLUMNS WHERE IS_IDENTITY = 'YES' AND TABLE_NAME IN "
            + "('OUTBOX_COMMAND', 'OUTBOX_AUDIT') UNION ALL SELECT CACHE FROM "
            + "INFORMATION_SCHEMA.SEQUENCES WHERE SEQUENCE_NAME = 'OUTBOX_FENCING_TOKEN'")) {
      while (rs.next()) {
        caches.add(rs.getLong(1));
      }
    }
    return caches;
  }
}
