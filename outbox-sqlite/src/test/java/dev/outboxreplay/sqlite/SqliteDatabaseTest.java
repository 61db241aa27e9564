package dev.outboxreplay.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.testkit.ListeningSockets;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link SqliteDatabase} does to a user's file: owner-only new files, the durability modes,
 * refusal of files it must not write (0-byte, not SQLite, another application's, damaged) with
 * their bytes unchanged, read-only opens that write nothing, a busy file as a retryable failure,
 * and space given back after the history retention deleted rows.
 */
class SqliteDatabaseTest {
  @TempDir Path dir;

  @Test
  void aNewFileAndItsLogAreOwnerOnlyInAnOwnerOnlyFolderAndMarkedAsTheLibrarys() throws Exception {
    Path base = dir.resolve("new").resolve("app");
    try (SqliteDatabase db = SqliteDatabase.open(base)) {
      accept(SqliteOutboxStore.create(db), 3);
      for (String name : List.of("app.sqlite", "app.sqlite-wal", "app.sqlite-shm")) {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
            dir.resolve("new").resolve(name)))).as(name).isEqualTo("rw-------");
      }
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
          dir.resolve("new")))).isEqualTo("rwx------");
      assertThat(pragma(db, "application_id")).isEqualTo(SqliteDatabase.APPLICATION_ID);
      assertThat(pragma(db, "auto_vacuum")).as("incremental").isEqualTo(2);
    }
    try (Stream<Path> files = Files.list(dir.resolve("new"))) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .as("closed: no log, no temporary file").containsExactly("app.sqlite");
    }
  }

  /**
   * Two openers of one file (as two processes of an app would be) share it through SQLite's file
   * locks: both write, both read the other's rows, and this process listens on no socket it did
   * not listen on before (H2's multi-process mode starts a server for the same sharing).
   */
  @Test
  void twoOpenersShareOneFileWithoutListeningOnAnySocket() throws Exception {
    assumeTrue(ListeningSockets.available(), "needs Linux /proc");
    long self = ProcessHandle.current().pid();
    List<ListeningSockets.Listener> before = ListeningSockets.of(self);
    Path base = dir.resolve("shared");
    try (SqliteDatabase first = SqliteDatabase.open(base);
        SqliteDatabase second = SqliteDatabase.open(base)) {
      SqliteOutboxStore one = SqliteOutboxStore.create(first);
      SqliteOutboxStore two = SqliteOutboxStore.create(second);
      accept(one, 3);
      accept(two, 4);
      assertThat(one.countByStatus().get(Status.QUEUED)).isEqualTo(7);
      assertThat(two.countByStatus().get(Status.QUEUED)).isEqualTo(7);
      assertThat(ListeningSockets.of(self)).as("listening sockets with the file open twice")
          .containsExactlyInAnyOrderElementsOf(before);
    }
  }

  @Test
  void theDurabilityModesAreSynchronousNormalAndFull() throws Exception {
    try (SqliteDatabase db = SqliteDatabase.open(dir.resolve("normal"))) {
      assertThat(pragma(db, "synchronous")).isEqualTo(1);
      assertThat(pragmaText(db, "journal_mode")).isEqualTo("wal");
    }
    try (SqliteDatabase db = SqliteDatabase.builder().file(dir.resolve("full"))
        .durability(Durability.POWER_LOSS_SAFE).build()) {
      assertThat(pragma(db, "synchronous")).isEqualTo(2);
    }
  }

  @Test
  void fileItMustNotWriteAreRefusedWithTheirBytesUnchanged() throws Exception {
    Path empty = Files.createFile(dir.resolve("empty.sqlite"));
    Path garbage = dir.resolve("garbage.sqlite");
    byte[] noise = new byte[8192];
    new Random(7).nextBytes(noise);
    Files.write(garbage, noise);
    Path foreign = dir.resolve("foreign.sqlite");
    try (Connection c = new org.sqlite.SQLiteConfig().createConnection("jdbc:sqlite:" + foreign);
        Statement s = c.createStatement()) {
      s.execute("PRAGMA application_id = 12345");
      s.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)");
    }
    Map<Path, String> expected = Map.of(empty, "empty (0 bytes)", garbage, "not a SQLite database",
        foreign, "another application's SQLite database");
    for (Map.Entry<Path, String> e : expected.entrySet()) {
      String before = sha256(e.getKey());
      for (boolean readOnly : new boolean[] {false, true}) {
        assertThatThrownBy(() -> SqliteDatabase.builder().file(e.getKey()).readOnly(readOnly)
            .build()).isInstanceOfSatisfying(OutboxStorageException.class, x -> {
              assertThat(x.getMessage()).contains(e.getKey().toString()).contains(e.getValue());
              assertThat(x.retryable()).isFalse();
            });
      }
      assertThat(sha256(e.getKey())).as(e.getValue()).isEqualTo(before);
    }
  }

  @Test
  void aDamagedFileIsRefusedByTheQuickCheckWithItsBytesUnchanged() throws Exception {
    Path base = dir.resolve("damaged");
    Path file = damagedFile(base);
    String before = sha256(file);
    assertThatThrownBy(() -> SqliteDatabase.open(base))
        .isInstanceOf(OutboxStorageException.class).hasMessageContaining("damaged")
        .hasMessageContaining("left untouched");
    assertThat(sha256(file)).isEqualTo(before);
  }

  /**
   * The quick check runs on files up to its limit and not beyond: the same damaged file is
   * refused by it at a limit of its size, and opened without it one byte below (where whatever
   * SQLite then finds is not the quick check's refusal).
   */
  @Test
  void theQuickCheckRunsOnFilesUpToItsLimit() throws Exception {
    Path base = dir.resolve("limit");
    Path file = damagedFile(base);
    long size = Files.size(file);
    String before = sha256(file);
    assertThatThrownBy(() -> SqliteDatabase.builder().file(base).quickCheckLimit(size).build())
        .isInstanceOf(OutboxStorageException.class).hasMessageContaining("quick_check");
    assertThat(sha256(file)).isEqualTo(before);
    try (SqliteDatabase db =
        SqliteDatabase.builder().file(base).quickCheckLimit(size - 1).build()) {
      assertThat(db.file()).isEqualTo(file);
    } catch (OutboxStorageException e) {
      assertThat(e).hasMessageNotContaining("quick_check");
    }
    assertThatThrownBy(() -> SqliteDatabase.builder().quickCheckLimit(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("quickCheckLimit");
  }

  @Test
  void aReadOnlyOpenWritesNothingAndReadsWhatAnotherConnectionCommits() throws Exception {
    Path base = dir.resolve("shared");
    try (SqliteDatabase writer = SqliteDatabase.open(base)) {
      SqliteOutboxStore store = SqliteOutboxStore.create(writer);
      accept(store, 2);
      try (SqliteDatabase reader = SqliteDatabase.builder().file(base).readOnly(true).build()) {
        SqliteOutboxStore read = SqliteOutboxStore.openExisting(reader);
        assertThat(read.countByStatus()).containsEntry(Status.QUEUED, 2L);
        accept(store, 1);
        assertThat(read.countByStatus()).containsEntry(Status.QUEUED, 3L);
        assertThatThrownBy(() -> SqliteOutboxStore.create(reader))
            .isInstanceOf(OutboxStorageException.class).hasMessageContaining("read-only");
      }
    }
    Path file = dir.resolve("shared.sqlite");
    String before = sha256(file);
    try (SqliteDatabase reader = SqliteDatabase.builder().file(base).readOnly(true).build()) {
      assertThat(SqliteOutboxStore.openExisting(reader).countByStatus())
          .containsEntry(Status.QUEUED, 3L);
    }
    assertThat(sha256(file)).as("a closed file read read-only").isEqualTo(before);
    assertThatThrownBy(() -> SqliteDatabase.builder().file(dir.resolve("missing"))
        .readOnly(true).build()).hasMessageContaining("read-only");
    assertThat(dir.resolve("missing.sqlite")).doesNotExist();
  }

  @Test
  void aWriteLockHeldPastTheBusyTimeoutIsARetryableFailure() throws Exception {
    Path base = dir.resolve("busy");
    try (SqliteDatabase holder = SqliteDatabase.open(base);
        SqliteDatabase other = SqliteDatabase.builder().file(base)
            .busyTimeout(Duration.ofMillis(100)).build()) {
      SqliteOutboxStore otherStore = SqliteOutboxStore.create(other);
      SqliteOutboxStore.create(holder);
      try (Connection c = holder.dataSource().getConnection()) {
        c.setAutoCommit(false);
        holder.dialect().beginWrite(c); // the file's write lock, held
        long started = System.nanoTime();
        assertThatThrownBy(() -> accept(otherStore, 1))
            .isInstanceOfSatisfying(OutboxStorageException.class, e -> {
              assertThat(e.retryable()).isTrue();
              assertThat(e.getMessage()).contains("write lock");
            });
        assertThat(Duration.ofNanos(System.nanoTime() - started))
            .as("it waited, then retried through the busy timeout")
            .isGreaterThanOrEqualTo(Duration.ofMillis(100));
        c.rollback();
      }
      accept(otherStore, 1);
      assertThat(otherStore.countByStatus()).containsEntry(Status.QUEUED, 1L);
    }
  }

  @Test
  void theHistoryRetentionGivesTheSpaceOfDeletedRowsBack() throws Exception {
    Path file = dir.resolve("retained.sqlite");
    try (SqliteDatabase db = SqliteDatabase.open(file)) {
      SqliteOutboxStore store = SqliteOutboxStore.create(db);
      accept(store, 3000);
      Instant now = Instant.now().plusSeconds(5); // every accept is due
      for (int i = 0; i < 3000; i++) {
        OutboxRecord held = store.claim("r", Duration.ofMinutes(1), 1, now).get(0);
        store.complete(held.commandId(), held.fencingToken(), Status.CLAIMED,
            Outcome.acked(new StoredResponse(201, new byte[512])), now);
      }
      db.compactFile();
      long full = Files.size(file);
      assertThat(store.tombstoneEnded(now.plusSeconds(1), now)).isEqualTo(3000);
      assertThat(store.deleteTombstones(now.plusSeconds(1))).isEqualTo(3000);
      db.compactFile();
      assertThat(Files.size(file)).as("from %d bytes", full).isLessThan(full / 4);
    }
  }

  private static List<OutboxRecord> accept(JdbcOutboxStore store, int n) {
    Outbox<Connection> outbox = Outbox.builder(store).build();
    List<OutboxRecord> accepted = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      accepted.add(outbox.accept(OutboxCommand.of("note.put", "n" + i,
          Map.of("i", i, "text", "x".repeat(200)))));
    }
    return accepted;
  }

  private static int pragma(SqliteDatabase db, String name) throws Exception {
    return Integer.parseInt(pragmaText(db, name));
  }

  private static String pragmaText(SqliteDatabase db, String name) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("PRAGMA " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  /**
   * A file of 300 accepted commands, written by the library, then damaged by something else: 8
   * bytes overwritten in every other page from the second on. Returns the file.
   */
  private static Path damagedFile(Path base) throws Exception {
    try (SqliteDatabase db = SqliteDatabase.open(base)) {
      accept(SqliteOutboxStore.create(db), 300);
    }
    Path file = base.resolveSibling(base.getFileName() + ".sqlite");
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      int pageSize = 4096;
      for (long page = 2; page * pageSize < raf.length(); page += 2) {
        raf.seek(page * pageSize + 40);
        raf.write(new byte[] {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef, 1, 2, 3, 4});
      }
    }
    return file;
  }
}
