package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.internal.FileCompaction;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compacting the file while it is open, through H2's storage-engine entry points that {@link
 * FileCompaction} isolates: this test fails when an H2 upgrade removes or changes them, or when
 * they stop giving space back.
 */
class FileCompactionTest {
  private static final int ROWS = 2_000;
  private static final int KEPT_EVERY = 20;

  @TempDir Path dir;

  /**
   * 2,000 rows of 4 KB, each in a commit of its own (as accepts are), then 19 of every 20
   * deleted: the file keeps its size until compacted, then shrinks to a fraction of it, and the
   * rows kept are all there, byte for byte, before and after a reopen. H2's retention time is
   * set to 0 here so that freed chunks are reusable at once; with its default (45 s) the same
   * happens after 45 s of real time.
   */
  @Test
  void aFileWithDeadSpaceShrinksWhileOpenAndKeepsEveryLiveRow() throws Exception {
    Path base = dir.resolve("sparse");
    long expectedSum;
    try (H2Database db = H2Database.builder().file(base).compaction(false).build()) {
      setRetentionTimeZero(db);
      expectedSum = fillAndThinOut(db);
      long grown = Files.size(db.file());
      long shrunk = 0;
      for (int i = 0; i < 100; i++) {
        long step = db.compactFile();
        shrunk += step;
        if (step == 0 && i > 2) {
          break;
        }
      }
      long compacted = Files.size(db.file());
      System.out.printf("FileCompactionTest: %,d bytes before, %,d after (%,d reported)%n",
          grown, compacted, shrunk);
      assertThat(shrunk).as("bytes reported shrunk").isEqualTo(grown - compacted);
      assertThat(compacted).as("file after compaction, of %,d", grown).isLessThan(grown / 3);
      assertThat(sumOfKeptRows(db)).isEqualTo(expectedSum);
    }
    try (H2Database db = H2Database.open(base)) {
      assertThat(sumOfKeptRows(db)).as("after a reopen").isEqualTo(expectedSum);
    }
  }

  @Test
  void aProcessThatReachesTheFileThroughAnotherProcessLeavesCompactionToIt() throws Exception {
    Path base = dir.resolve("served");
    try (ChildJvm server = ServeFileChild.serving(base, dir.resolve("server.err"))) {
      try (H2Database client = H2Database.open(base);
          Connection c = client.dataSource().getConnection()) {
        assertThat(FileCompaction.step(c, 100, 1 << 20, 1 << 20).servedHere()).isFalse();
        assertThat(client.compactFile()).isZero();
      }
      server.send("close");
      assertThat(server.nextLine(Duration.ofSeconds(60))).isEqualTo("CLOSED");
    }
  }

  /** Fills {@code db}, deletes most rows; returns the checksum of the rows kept. */
  private static long fillAndThinOut(H2Database db) throws Exception {
    Random random = new Random(11);
    long sum = 0;
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE blob_row (id INT PRIMARY KEY, body VARBINARY(4096))");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO blob_row VALUES (?, ?)")) {
        for (int i = 0; i < ROWS; i++) {
          byte[] body = new byte[4096];
          random.nextBytes(body);
          ps.setInt(1, i);
          ps.setBytes(2, body);
          ps.executeUpdate(); // auto-commit: one chunk per row, as accepts write
          if (i % KEPT_EVERY == 0) {
            sum += java.util.Arrays.hashCode(body);
          }
        }
      }
      for (int i = 0; i < ROWS; i += 100) {
        s.executeUpdate("DELETE FROM blob_row WHERE id >= " + i + " AND id < " + (i + 100)
            + " AND MOD(id, " + KEPT_EVERY + ") <> 0");
      }
    }
    return sum;
  }

  private static long sumOfKeptRows(H2Database db) throws Exception {
    long sum = 0;
    int rows = 0;
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT body FROM blob_row ORDER BY id")) {
      while (rs.next()) {
        sum += java.util.Arrays.hashCode(rs.getBytes(1));
        rows++;
      }
    }
    assertThat(rows).isEqualTo(ROWS / KEPT_EVERY);
    return sum;
  }

  private static void setRetentionTimeZero(H2Database db) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("SET RETENTION_TIME 0");
    }
  }
}
