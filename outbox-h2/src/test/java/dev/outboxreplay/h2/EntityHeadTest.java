package dev.outboxreplay.h2;

import dev.outboxreplay.jdbc.internal.OutboxTables;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.OutboxSchema;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-entity head flag that keeps the claim from reading queued backlogs: how a claim clears
 * it, how it is passed on, repaired after a race, and back-filled when a version 2 file is
 * upgraded.
 */
class EntityHeadTest {
  private static final Duration LEASE = Duration.ofMinutes(1);
  @TempDir Path dir;
  final ManualClock clock = ManualClock.startingAtEpoch2026();

  @Test
  void headPassesToTheNextOpenRowWhenItEndsInAnyTerminalStatus() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("pass"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      List<OutboxRecord> rows = outbox.acceptAll(List.of(cmd("a", 1), cmd("a", 2), cmd("a", 3)));
      // Accept is a plain insert: every new row is flagged until a claim sees it waiting.
      assertThat(heads(db)).hasSize(3);

      List<OutboxRecord> claimed = store.claim("r", LEASE, 10, clock.instant());
      assertThat(claimed).extracting(OutboxRecord::commandId)
          .containsExactly(rows.get(0).commandId());
      assertThat(heads(db)).as("the claim cleared the flag of the rows behind the head")
          .containsExactly(rows.get(0).commandId().value());
      assertThat(store.claim("r", LEASE, 10, clock.instant())).isEmpty();

      OutboxRecord first = claimed.get(0);
      store.complete(first.commandId(), first.fencingToken(), Status.CLAIMED,
          Outcome.rejected(null, null), clock.instant());
      assertThat(heads(db)).containsExactly(rows.get(1).commandId().value());

      OutboxRecord second = claimOne(store);
      assertThat(second.commandId()).isEqualTo(rows.get(1).commandId());
      store.complete(second.commandId(), second.fencingToken(), Status.CLAIMED,
          Outcome.acked(null), clock.instant());
      assertThat(claimOne(store).commandId()).isEqualTo(rows.get(2).commandId());

      // An operator requeue of the rejected first row: it is older than the open third row,
      // so it becomes a head again and is claimed once the third ends.
      store.requeue(first.commandId(), clock.instant());
      assertThat(heads(db)).contains(first.commandId().value());
    }
  }

  @Test
  void aHeadClearedByARacingClaimIsRepairedByTheNextRecovery() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("race"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).clock(clock).build();
      OutboxRecord first = outbox.accept(cmd("a", 1));
      OutboxRecord held = claimOne(store);
      OutboxRecord second = outbox.accept(cmd("a", 2));
      store.complete(held.commandId(), held.fencingToken(), Status.CLAIMED, Outcome.acked(null),
          clock.instant());
      // What a race leaves behind: a claim read `second` as waiting behind `first` just before
      // `first` was completed, and cleared its flag just after the hand-over (which still saw
      // the flag set and so changed nothing) had committed.
      execute(db, "UPDATE outbox_command SET entity_head = FALSE WHERE command_id = '"
          + second.commandId().value() + "'");
      assertThat(store.claim("r", LEASE, 10, clock.instant())).isEmpty();
      assertThat(store.nextDueAt()).isEmpty();

      store.recoverExpiredLeases(clock.instant());

      assertThat(heads(db)).containsExactly(second.commandId().value());
      assertThat(claimOne(store).commandId()).isEqualTo(second.commandId());
      assertThat(store.find(first.commandId()).orElseThrow().status()).isEqualTo(Status.ACKED);
    }
  }

  @Test
  void upgradingAVersion2FileFlagsTheOldestOpenRowOfEachEntity() throws Exception {
    Path file = dir.resolve("v2");
    List<UUID> ids = new ArrayList<>();
    try (H2Database db = H2Database.open(file)) {
      db.migrate(OutboxTables.COMPONENT, OutboxSchema.MIGRATIONS.subList(0, 2));
      // entity a: acked, queued, queued; entity b: queued. Written with the version 2 layout.
      String[][] rows = {{"a", "acked"}, {"a", "queued"}, {"a", "queued"}, {"b", "queued"}};
      for (int i = 0; i < rows.length; i++) {
        UUID id = UUID.randomUUID();
        ids.add(id);
        try (Connection c = db.dataSource().getConnection();
            PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_command (command_id, "
                + "idempotency_key, operation, entity_key, payload, payload_hash, status, "
                + "attempt, next_attempt_at, fencing_token, session_version, created_at, "
                + "updated_at, schema_version) VALUES (?, ?, 'op', ?, ?, ?, ?, 0, ?, 0, 0, ?, ?, 1)")) {
          byte[] payload = "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
          ps.setObject(1, id);
          ps.setString(2, "key-" + i);
          ps.setString(3, rows[i][0]);
          ps.setBytes(4, payload);
          ps.setBytes(5, java.security.MessageDigest.getInstance("SHA-256").digest(payload));
          ps.setString(6, rows[i][1]);
          ps.setLong(7, clock.millis());
          ps.setLong(8, clock.millis());
          ps.setLong(9, clock.millis());
          ps.executeUpdate();
        }
      }
    }
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      assertThat(heads(db)).containsExactlyInAnyOrder(ids.get(1), ids.get(3));
      assertThat(columnExists(db, "DUE_AT")).isFalse();
      List<OutboxRecord> claimed = store.claim("r", LEASE, 10, clock.instant());
      assertThat(claimed).extracting(r -> r.commandId().value())
          .containsExactly(ids.get(1), ids.get(3));
    }
  }

  private OutboxRecord claimOne(H2OutboxStore store) {
    List<OutboxRecord> claimed = store.claim("r", LEASE, 1, clock.instant());
    assertThat(claimed).hasSize(1);
    return claimed.get(0);
  }

  private static OutboxCommand cmd(String entity, int n) {
    return OutboxCommand.of("op", entity, Map.of("n", n));
  }

  private static List<UUID> heads(H2Database db) throws java.sql.SQLException {
    List<UUID> heads = new ArrayList<>();
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT command_id FROM outbox_command WHERE entity_head AND NOT terminal ORDER BY seq")) {
      while (rs.next()) {
        heads.add(rs.getObject(1, UUID.class));
      }
    }
    return heads;
  }

  private static boolean columnExists(H2Database db, String column) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.getMetaData().getColumns(null, null, "OUTBOX_COMMAND", column)) {
      return rs.next();
    }
  }

  private static void execute(H2Database db, String sql) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.executeUpdate(sql);
    }
  }
}
