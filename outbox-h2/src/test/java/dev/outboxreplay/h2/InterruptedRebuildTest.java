package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * H2 rebuilds a table for {@code ALTER TABLE ... ADD COLUMN} in several commits (copy, drop,
 * rename); a process killed in between leaves the rows under the copy's name. The three files
 * are the field's, made by SIGKILLing a process running this library's migrations:
 * {@code files/killed-during-upgrade-copy-only.mv.db} (layout 6, five commands, only in
 * {@code OUTBOX_COMMAND_COPY_3_8}), {@code killed-during-upgrade-copy-beside.mv.db} (layout 2,
 * five commands in {@code OUTBOX_COMMAND} and a full copy beside it) and
 * {@code killed-during-first-open-copy-only.mv.db} (a new file, no command, only the copy).
 */
class InterruptedRebuildTest {
  @TempDir Path dir;

  @Test
  void rowsLeftOnlyInTheCopyAreReadAndTheNextWritableOpenPutsTheTableBack() throws Exception {
    Path base = fieldFile("killed-during-upgrade-copy-only");
    String before = sha256(dir.resolve("app.mv.db"));
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.OUTBOX);
      assertThatThrownBy(() -> H2OutboxStore.openExisting(db))
          .isInstanceOf(OutboxStorageException.class)
          .hasMessageContaining("layout is version 6").hasMessageContaining("open it once");
    }
    assertThat(sha256(dir.resolve("app.mv.db"))).as("read-only: nothing written")
        .isEqualTo(before);

    try (H2Database db = H2Database.open(base)) {
      H2OutboxStore store = H2OutboxStore.openExisting(db);
      assertThat(store.countByStatus()).containsEntry(Status.QUEUED, 5L);
      assertThat(tables(db)).contains("OUTBOX_COMMAND").noneMatch(t -> t.contains("_COPY_"));
      assertThat(names(db, "SELECT INDEX_NAME FROM INFORMATION_SCHEMA.INDEXES "
          + "WHERE TABLE_NAME = 'OUTBOX_COMMAND'"))
          .contains("IDX_OUTBOX_CLAIM", "IDX_OUTBOX_ENTITY_OPEN", "IDX_OUTBOX_STATUS")
          .noneMatch(n -> n.contains("_COPY_"));
      assertThat(names(db, "SELECT CONSTRAINT_NAME FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS "
          + "WHERE TABLE_NAME = 'OUTBOX_COMMAND'"))
          .contains("UQ_OUTBOX_IDEMPOTENCY_KEY").noneMatch(n -> n.contains("_COPY_"));
      long lastSeq = longValue(db, "SELECT MAX(seq) FROM outbox_command");
      Outbox.builder(store).build().accept(OutboxCommand.of("note.put", "n0", Map.of("a", 1)));
      assertThat(longValue(db, "SELECT MAX(seq) FROM outbox_command"))
          .as("accept order goes on after the kept rows").isGreaterThan(lastSeq);
      assertThat(longValue(db, "SELECT COUNT(DISTINCT seq) FROM outbox_command")).isEqualTo(6);
      assertThatThrownBy(() -> execute(db, "INSERT INTO outbox_command (command_id, "
          + "idempotency_key, operation, entity_key, payload, payload_hash, status, attempt, "
          + "next_attempt_at, fencing_token, session_version, created_at, updated_at, "
          + "schema_version) VALUES (RANDOM_UUID(), 'k0', 'op', 'e', X'7b7d', X'"
          + "00".repeat(32) + "', 'queued', 0, 0, 1, 0, 0, 0, 1)"))
          .as("the idempotency key stays unique").isInstanceOf(SQLException.class);
    }
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.openExisting(db).countByStatus()).containsEntry(Status.QUEUED, 6L);
    }
  }

  @Test
  void aCopyBesideItsTableIsDroppedAndEveryRowStays() throws Exception {
    Path base = fieldFile("killed-during-upgrade-copy-beside");
    try (H2Database db = H2Database.open(base)) {
      assertThat(H2OutboxStore.openExisting(db).countByStatus()).containsEntry(Status.QUEUED, 5L);
      assertThat(tables(db)).contains("OUTBOX_COMMAND").noneMatch(t -> t.contains("_COPY_"));
    }
  }

  @Test
  void aNewFileKilledWithOnlyTheCopyReadsAsUnfinishedAndIsFinished() throws Exception {
    Path base = fieldFile("killed-during-first-open-copy-only");
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.UNFINISHED);
    }
    try (H2Database db = H2Database.open(base)) {
      H2OutboxStore store = H2OutboxStore.openExisting(db);
      Outbox.builder(store).build().accept(OutboxCommand.of("note.put", "n", Map.of("a", 1)));
      assertThat(store.countByStatus()).containsEntry(Status.QUEUED, 1L);
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.OUTBOX);
    }
  }

  @Test
  void twoCopiesOfAGoneTableAreRefusedByNameAndNothingIsChanged() throws Exception {
    Path base = fieldFile("killed-during-upgrade-copy-only");
    try (H2Database db = H2Database.builder().file(base).multiProcess(false).build()) {
      execute(db, "CREATE TABLE OUTBOX_COMMAND_COPY_9_1 AS SELECT * FROM OUTBOX_COMMAND_COPY_3_8");
    }
    try (H2Database db = H2Database.open(base)) {
      assertThatThrownBy(() -> H2OutboxStore.openExisting(db))
          .isInstanceOf(OutboxStorageException.class)
          .hasMessageContaining("OUTBOX_COMMAND_COPY_3_8")
          .hasMessageContaining("OUTBOX_COMMAND_COPY_9_1");
      assertThat(tables(db)).contains("OUTBOX_COMMAND_COPY_3_8", "OUTBOX_COMMAND_COPY_9_1")
          .doesNotContain("OUTBOX_COMMAND");
      assertThat(longValue(db, "SELECT COUNT(*) FROM OUTBOX_COMMAND_COPY_3_8")).isEqualTo(5);
    }
  }

  private static List<String> tables(H2Database db) throws SQLException {
    return names(db, "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES "
        + "WHERE TABLE_SCHEMA = 'PUBLIC'");
  }

  private static List<String> names(H2Database db, String query) throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    }
    return names;
  }

  private static long longValue(H2Database db, String query) throws SQLException {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void execute(H2Database db, String sql) throws SQLException {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** The field file {@code name} as {@code dir/app.mv.db}; its base path. */
  private Path fieldFile(String name) throws Exception {
    try (InputStream in = getClass().getResourceAsStream("/files/" + name + ".mv.db")) {
      Files.copy(in, dir.resolve("app.mv.db"));
    }
    return dir.resolve("app");
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
