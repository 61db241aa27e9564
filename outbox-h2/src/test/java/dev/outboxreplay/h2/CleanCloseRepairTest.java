package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.internal.FileCheck;
import dev.outboxreplay.h2.internal.RecoveringFileSystem;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.h2.mvstore.MVStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files H2 closed cleanly and would then open at an older state, kept from {@code
 * AcceptCrashTest}'s compaction kills: each time the test's verification opened the killed
 * child's file, read it and closed it, and the next child was refused the file.
 *
 * <ul>
 *   <li>{@code clean-close-lists-overwritten-dead-chunk.mv.db} (seed 32592020062102, round 1):
 *       the clean header names chunk 283, whose chunk layout still lists chunk 279, dead (0%
 *       live), whose blocks newer chunks took;
 *   <li>{@code clean-close-after-library-compaction.mv.db} (seed 64905220190722, round 9, with
 *       the library's own compaction before the close): the clean header names chunk 3708, which
 *       stands in the blocks of chunk 3705, dead since version 3706 and still listed in 3708's
 *       layout.
 * </ul>
 *
 * H2's open of a clean file demands each of the newest chunks its layout lists; it finds the dead
 * one overwritten, and settles on an older version without an error. Opened as after a crash, H2
 * lets a listed chunk that holds no live page be missing and reads the newest version whole. The
 * library drops the clean mark from such a file's header and opens it at the version the header
 * records. A read-only open refuses it, saying so; a file H2's recovery does not read whole is
 * still refused as damaged, and left as it was.
 */
class CleanCloseRepairTest {
  /** A kept file, the version its clean header records, and the version H2 opens it at. */
  private record Kept(String resource, long recorded, long plainH2Opens) {}

  private static final List<Kept> FILES = List.of(
      new Kept("clean-close-lists-overwritten-dead-chunk.mv.db", 283, 272),
      new Kept("clean-close-after-library-compaction.mv.db", 3708, 3701));
  private static final int HEADER_BYTES = 2 * 4096;

  @TempDir Path dir;

  @Test
  void plainH2OpensEachAtAnOlderVersionThanItsCleanHeaderRecords() throws Exception {
    for (Kept kept : FILES) {
      Path data = copy(kept, "plain");
      try (MVStore h2Alone = new MVStore.Builder().fileName(data.toString()).readOnly().open()) {
        Map<String, Object> header = h2Alone.getStoreHeader();
        assertThat(String.valueOf(header.get("clean"))).as("%s closed cleanly", kept.resource())
            .isEqualTo("1");
        assertThat(Long.parseLong(String.valueOf(header.get("version")), 16))
            .isEqualTo(kept.recorded());
        // if this fails, an H2 upgrade opens such files whole: the mend may be retired
        assertThat(h2Alone.getCurrentVersion()).as("%s: the version H2 opens by itself",
            kept.resource()).isEqualTo(kept.plainH2Opens());
      }
      try (MVStore recovered = new MVStore.Builder().fileName(data.toString()).readOnly()
          .recoveryMode().open()) {
        assertThat(recovered.getCurrentVersion()).as("%s: H2's recovery", kept.resource())
            .isEqualTo(kept.recorded());
      }
    }
  }

  @Test
  void theLibraryOpensEachAtTheVersionItsHeaderRecordsAndChangesOnlyTheHeader() throws Exception {
    for (Kept kept : FILES) {
      Path data = copy(kept, "mended");
      byte[] before = Files.readAllBytes(data);

      assertThat(FileCheck.verifyBeforeOpen(data, null, true)).as("in use").isFalse();

      byte[] after = Files.readAllBytes(data);
      assertThat(after).hasSameSizeAs(before);
      assertThat(Arrays.copyOfRange(after, HEADER_BYTES, after.length))
          .as("%s: everything after the store header", kept.resource())
          .isEqualTo(Arrays.copyOfRange(before, HEADER_BYTES, before.length));
      try (MVStore h2Alone = new MVStore.Builder().fileName(data.toString()).readOnly().open()) {
        assertThat(h2Alone.getStoreHeader()).doesNotContainKey("clean");
        assertThat(h2Alone.getCurrentVersion()).as("%s: the version H2 opens now",
            kept.resource()).isEqualTo(kept.recorded());
      }

      long olderRows = rowsPlainH2Reads(copy(kept, "older"));
      Path base = data.resolveSibling("mended");
      try (H2Database db = H2Database.builder().file(base).multiProcess(false).build();
          Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT payload, payload_hash FROM outbox_command")) {
        long rows = 0;
        while (rs.next()) {
          rows++;
          assertThat(MessageDigest.getInstance("SHA-256").digest(rs.getBytes(1)))
              .as("%s: payload hash of row %d", kept.resource(), rows).isEqualTo(rs.getBytes(2));
        }
        System.out.printf("CleanCloseRepairTest: %s opens at version %d with %d commands; "
            + "plain H2 opened version %d with %d%n", kept.resource(), kept.recorded(), rows,
            kept.plainH2Opens(), olderRows);
        assertThat(rows).isPositive().isGreaterThanOrEqualTo(olderRows);
      }
    }
  }

  /**
   * H2 opening such a file itself, as a process does inside {@code getConnection} when the process
   * whose server it reached the file through closed it: the library's check does not run there,
   * the mend under H2's lock does.
   */
  @Test
  void aConnectionThatOpensSuchAFileItselfReadsTheRecordedVersion() throws Exception {
    for (Kept kept : FILES) {
      long olderRows = rowsPlainH2Reads(copy(kept, "older-" + kept.recorded()));
      Path data = copy(kept, "taken-over");
      String base = data.toString().substring(0, data.toString().length() - ".mv.db".length());
      RecoveringFileSystem.register();
      try (Connection c = DriverManager.getConnection("jdbc:h2:" + RecoveringFileSystem.SCHEME
          + ":" + base + ";IFEXISTS=TRUE;AUTO_SERVER=TRUE;FILE_LOCK=SOCKET", "sa", "");
          ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM outbox_command")) {
        rs.next();
        assertThat(rs.getLong(1)).as("%s: commands H2 reads", kept.resource())
            .isGreaterThan(olderRows);
      }
    }
  }

  @Test
  void aReadOnlyOpenRefusesSuchAFileSayingHowToMendItAndWritesNothing() throws Exception {
    Kept kept = FILES.get(0);
    Path data = copy(kept, "view");
    byte[] before = Files.readAllBytes(data);
    Path base = data.resolveSibling("view");
    assertThatThrownBy(() -> H2Database.builder().file(base).multiProcess(false).readOnly(true)
        .build())
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("H2 can read only version 272 of it, older than version 283")
        .hasMessageContaining("opening it once for writing (not read-only) drops the clean mark")
        .hasMessageNotContaining("damaged");
    assertThat(Files.readAllBytes(data)).isEqualTo(before);
  }

  @Test
  void aCleanFileWhoseNewestChunkIsDamagedIsStillRefusedAndLeftUntouched() throws Exception {
    Kept kept = FILES.get(1);
    Path data = copy(kept, "damaged");
    try (FileChannel channel = FileChannel.open(data, StandardOpenOption.WRITE)) {
      // the footer of chunk 3708 (blocks 8 and 9), the chunk the clean header names
      channel.write(ByteBuffer.wrap(new byte[128]), 10L * 4096 - 128);
    }
    byte[] before = Files.readAllBytes(data);
    assertThatThrownBy(() -> FileCheck.verifyBeforeOpen(data, null, true))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("it is damaged: H2 can read only version")
        .hasMessageContaining("older than version 3708 that its store header records");
    assertThat(Files.readAllBytes(data)).isEqualTo(before);
  }

  /** Commands plain H2 reads in {@code data}, opening it itself (and writing to it). */
  private static long rowsPlainH2Reads(Path data) throws Exception {
    String base = data.toString().substring(0, data.toString().length() - ".mv.db".length());
    try (Connection c = DriverManager.getConnection("jdbc:h2:file:" + base + ";IFEXISTS=TRUE",
        "sa", "");
        ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM outbox_command")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** A copy of the kept file, as {@code name.mv.db} in its own folder. */
  private Path copy(Kept kept, String name) throws Exception {
    Path folder = Files.createDirectories(dir.resolve(name + "-" + kept.recorded()));
    Path target = folder.resolve(name + ".mv.db");
    try (InputStream in = CleanCloseRepairTest.class.getResourceAsStream(
        "/files/" + kept.resource())) {
      assertThat(in).as(kept.resource()).isNotNull();
      Files.copy(in, target);
    }
    return target;
  }
}
