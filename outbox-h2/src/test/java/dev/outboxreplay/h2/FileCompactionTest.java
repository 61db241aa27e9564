package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxreplay.h2.internal.FileCompaction;
import dev.outboxreplay.h2.internal.H2File;
import dev.outboxreplay.h2.internal.ServedHere;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.h2.mvstore.Chunk;
import org.h2.mvstore.FileStore;
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
      long shrunk = compactUntilDone(db);
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

  /**
   * H2's own close compacts at retention time 0 whatever the database's setting, and files it
   * closed that way after a kill were refused at their next open (docs/h2-file-handling.md, "A clean
   * close that H2 compacts"). The library turns that compaction off and compacts before it
   * closes, at the database's retention (45 s by default): a file thinned out just before close
   * keeps the space freed within those 45 s, and every kept row is there after a reopen. With
   * H2's close-time compaction back, the close shrank the file from 54 MB to 0.8 MB.
   */
  @Test
  void closingReusesNoSpaceFreedWithinTheRetentionTime() throws Exception {
    Path base = dir.resolve("closed-young");
    long expectedSum;
    long grown;
    try (H2Database db = H2Database.open(base)) {
      expectedSum = fillAndThinOut(db);
      grown = Files.size(db.file());
    }
    long closed = Files.size(H2File.dataFileOf(base));
    System.out.printf("FileCompactionTest: %,d bytes before the close, %,d after%n", grown,
        closed);
    assertThat(closed).as("file after the close, of %,d", grown).isGreaterThan(grown * 3 / 4);
    try (H2Database db = H2Database.open(base)) {
      assertThat(sumOfKeptRows(db)).as("after a reopen").isEqualTo(expectedSum);
    }
  }

  /**
   * The one old chunk is full and only young chunks are sparse: a step rewrites nothing, since
   * rewriting a full chunk gives nothing back. {@code MVStore.compact} alone did rewrite it: it
   * tests the live share of all chunks, the young included, and then takes old chunks however
   * full they are; an idle file kept rewriting full chunks that way. H2 counts a chunk as old
   * once its retention time has passed since it was written, in real time; the test sets that
   * time so that the full chunk, written two seconds before the sparse ones, is old and they are
   * not. The wait for those two seconds polls H2's own clock, which cannot be given another.
   */
  @Test
  void aStepLeavesFullOldChunksAloneWhileOnlyYoungChunksAreSparse() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("young")).compaction(false)
            .build();
        Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      c.setAutoCommit(true);
      s.execute("SET RETENTION_TIME 600000");
      s.execute("CREATE TABLE full_rows (id INT PRIMARY KEY, body VARBINARY(2048))");
      s.execute("CREATE TABLE churn (id INT PRIMARY KEY, v INT)");
      s.execute("INSERT INTO churn VALUES (1, 0)");
      // one commit, so one chunk that stays full: nothing in it is written again
      s.execute("INSERT INTO full_rows SELECT X, CAST(REPEAT(CAST(X AS VARCHAR), 1) || "
          + "SPACE(2000) AS VARBINARY(2048)) FROM SYSTEM_RANGE(1, 300)");
      FileStore<?> file = ServedHere.localSession(c).getDatabase().getStore().getMvStore()
          .getFileStore();
      long fullWrittenAt = newestChunkTime(file);
      // the sparse chunks come two seconds later in H2's time
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
          .until(() -> msSinceCreation(file) > fullWrittenAt + 2_000);
      for (int i = 0; i < 500; i++) {
        s.executeUpdate("UPDATE churn SET v = v + 1"); // each a chunk that the next one empties
      }
      // old: written up to a second after the full chunk, so the step below has a second
      s.execute("SET RETENTION_TIME " + (msSinceCreation(file) - fullWrittenAt - 1_000));
      assertThat(setting(s, "info.CHUNKS_FILL_RATE")).as("all chunks' live share")
          .isLessThan(80);
      assertThat(setting(s, "info.CHUNKS_FILL_RATE_RW")).as("old chunks' live share")
          .isGreaterThanOrEqualTo(80);
      FileCompaction.Step step = FileCompaction.step(c, 80, 1 << 20, 4 << 20);
      assertThat(step.servedHere()).isTrue();
      assertThat(step.rewrote()).as("rewrote the full old chunk").isFalse();
    }
  }

  /** When the newest chunk was written, in ms since the store was created (H2's time). */
  private static long newestChunkTime(FileStore<?> file) {
    long time = -1;
    int newest = -1;
    for (Map.Entry<String, String> e : file.getLayoutMap().entrySet()) {
      if (e.getKey().startsWith("chunk.")) {
        Chunk<?> chunk = file.createChunk(e.getValue());
        if (chunk.id > newest) {
          newest = chunk.id;
          time = chunk.time;
        }
      }
    }
    return time;
  }

  private static long msSinceCreation(FileStore<?> file) {
    return System.currentTimeMillis() - file.getCreationTime();
  }

  private static int setting(Statement s, String name) throws Exception {
    try (ResultSet rs = s.executeQuery("SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS "
        + "WHERE SETTING_NAME = '" + name + "'")) {
      assertThat(rs.next()).as(name).isTrue();
      return Integer.parseInt(rs.getString(1));
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
  /** Calls {@code compactFile()} until it gives nothing back; the bytes it reported in all. */
  static long compactUntilDone(H2Database db) {
    long shrunk = 0;
    for (int i = 0; i < 100; i++) {
      long step = db.compactFile();
      shrunk += step;
      if (step == 0 && i > 2) {
        break;
      }
    }
    return shrunk;
  }

  static long fillAndThinOut(H2Database db) throws Exception {
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

  static long sumOfKeptRows(H2Database db) throws Exception {
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

  static void setRetentionTimeZero(H2Database db) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("SET RETENTION_TIME 0");
    }
  }
}
