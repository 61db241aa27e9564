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
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A file this library started and never finished (its creating process was killed during the
 * first open) is finished by the next writable open and reads as an empty outbox read-only. The
 * two files are the field's: {@code files/killed-during-first-open-*.mv.db}.
 */
class UnfinishedFileTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"no-tables", "layout-2"})
  void aFileKilledDuringItsFirstOpenReadsAsUnfinishedAndIsFinishedByAWritableOpen(String kind)
      throws Exception {
    Path base = fieldFile(kind);
    String before = sha256(dir.resolve("app.mv.db"));
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.UNFINISHED);
      assertThatThrownBy(() -> H2OutboxStore.openExisting(db))
          .isInstanceOf(OutboxStorageException.class).hasMessageContaining("never finished");
    }
    assertThat(sha256(dir.resolve("app.mv.db"))).as("read-only: nothing written")
        .isEqualTo(before);
    try (H2Database db = H2Database.open(base)) {
      H2OutboxStore store = H2OutboxStore.openExisting(db);
      Outbox.builder(store).build().accept(OutboxCommand.of("note.put", "n", Map.of("a", 1)));
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.OUTBOX);
    }
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.openExisting(db).countByStatus()).containsEntry(Status.QUEUED, 1L);
    }
  }

  @Test
  void anotherApplicationsFileIsStillNoOutboxAndAnOlderLayoutWithCommandsIsNotUnfinished()
      throws Exception {
    Path other = dir.resolve("other");
    try (H2Database db = H2Database.open(other);
        Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE note (id INT PRIMARY KEY)");
    }
    try (H2Database db = H2Database.builder().file(other).readOnly(true).build()) {
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.NO_OUTBOX);
    }
    Path base = fieldFile("layout-2");
    try (H2Database db = H2Database.builder().file(base).multiProcess(false).build();
        Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      // a command in the layout-2 table, as an older release's file would hold
      s.execute("INSERT INTO outbox_command (command_id, idempotency_key, operation, "
          + "entity_key, payload, payload_hash, status, attempt, next_attempt_at, "
          + "fencing_token, session_version, created_at, updated_at, schema_version) VALUES "
          + "(RANDOM_UUID(), 'k', 'op', 'e', X'7b7d', X'" + "00".repeat(32) + "', 'queued', "
          + "0, 0, 1, 0, 0, 0, 1)");
    }
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.layout(db)).isEqualTo(H2OutboxStore.Layout.OUTBOX);
      assertThatThrownBy(() -> H2OutboxStore.openExisting(db))
          .hasMessageContaining("layout is version 2");
    }
  }

  /** The field file of {@code kind} as {@code dir/app.mv.db}; its base path. */
  private Path fieldFile(String kind) throws Exception {
    try (InputStream in = getClass().getResourceAsStream(
        "/files/killed-during-first-open-" + kind + ".mv.db")) {
      Files.copy(in, dir.resolve("app.mv.db"));
    }
    return dir.resolve("app");
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
