package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Payload;
import dev.outboxreplay.h2.internal.FileCheck;
import dev.outboxreplay.h2.internal.H2File;
import dev.outboxreplay.h2.internal.RecoveringFileSystem;
import dev.outboxreplay.h2.internal.RetryingOpenDataSource;
import dev.outboxreplay.h2.internal.StoreHeaderRepair;
import dev.outboxreplay.testkit.ChildJvm;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file H2 itself left behind: {@code header-behind-after-kill.mv.db} is the file of a child
 * JVM ({@link AcceptLoopChild}, round 320) killed with SIGKILL right after its first accept
 * returned, copied before anything opened it again. Its last two chunks were written into free
 * space while the store header still names the chunk before them, so H2 2.5's recovery opens it
 * without that accept. Opened through {@link H2Database}, the accept is there.
 */
class StoreHeaderRepairTest {
  /** The accept the child printed as returned ({@code ACK ... 320 0 END}) before the kill. */
  static final CommandId LAST_ACCEPT = CommandId.parse("01a23335-3582-702b-9379-bea507deb920");
  /** Commands in the file, and whether {@link #LAST_ACCEPT} is one of them. */
  static final String ROWS_AND_LAST_ACCEPT = "SELECT COUNT(*), COUNT(CASE WHEN command_id = '"
      + LAST_ACCEPT + "' THEN 1 END) FROM outbox_command";

  @TempDir Path dir;

  @Test
  void plainH2RecoversTheFileWithoutItsLastAccept() throws Exception {
    Path base = copyOfTheKilledFile("plain");
    try (Connection c = DriverManager.getConnection("jdbc:h2:file:" + base + ";IFEXISTS=TRUE",
        "sa", "");
        ResultSet rs = c.createStatement().executeQuery(ROWS_AND_LAST_ACCEPT)) {
      rs.next();
      // if this fails, H2's recovery no longer has the gap: the repair may be retired
      assertThat(rs.getLong(2)).as("the last accept, as plain H2 opens the file").isZero();
      assertThat(rs.getLong(1)).isEqualTo(526);
    }
  }

  @Test
  void openingThroughTheLibraryKeepsTheLastAcceptByteForByte() throws Exception {
    Path base = copyOfTheKilledFile("app");
    assertTwoOpensKeepTheLastAccept(
        () -> H2Database.builder().file(base).multiProcess(false).build());
  }

  /**
   * Opens the killed file twice with {@code open}; each time {@link #LAST_ACCEPT} is there byte
   * for byte, with all 527 commands.
   */
  static void assertTwoOpensKeepTheLastAccept(java.util.function.Supplier<H2Database> open) {
    for (int n = 0; n < 2; n++) {
      try (H2Database db = open.get()) {
        H2OutboxStore store = H2OutboxStore.create(db);
        OutboxRecord r = store.find(LAST_ACCEPT).orElse(null);
        assertThat(r).as("open %d: the accept that had returned before the kill", n)
            .isNotNull();
        assertThat(r.payload().bytes()).isEqualTo(Payload.ofCanonicalBytes(
            AcceptLoopChild.payloadJson(320, 0).getBytes(StandardCharsets.UTF_8)).bytes());
        assertThat(store.countByStatus().values().stream().mapToLong(Long::longValue).sum())
            .isEqualTo(527);
      }
    }
  }

  @Test
  void aReadOnlyOpenWritesNothingEvenToAFileWhoseHeaderLags() throws Exception {
    Path base = copyOfTheKilledFile("view");
    byte[] before = Files.readAllBytes(H2File.dataFileOf(base));
    try (H2Database db = H2Database.builder().file(base).multiProcess(false).readOnly(true)
        .build()) {
      // plain SQL: the kept file has an older outbox layout, which the store reads only after
      // a writing open has migrated it
      try (java.sql.Connection c = db.dataSource().getConnection();
          java.sql.PreparedStatement ps = c.prepareStatement(
              "SELECT COUNT(*) FROM outbox_command WHERE command_id = ?")) {
        ps.setObject(1, LAST_ACCEPT.value());
        try (java.sql.ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getLong(1)).as("H2's own recovery, unrepaired").isZero();
        }
      }
    }
    assertThat(Files.readAllBytes(H2File.dataFileOf(base))).isEqualTo(before);
  }

  @Test
  void aFileClosedCleanlyOrAlreadyRepairedIsLeftByteForByte() throws Exception {
    Path base = dir.resolve("clean");
    try (H2Database db = H2Database.builder().file(base).multiProcess(false).build()) {
      H2OutboxStore.create(db);
    }
    byte[] before = Files.readAllBytes(H2File.dataFileOf(base));
    assertThat(StoreHeaderRepair.repairIfBehind(H2File.dataFileOf(base))).isNull();
    assertThat(Files.readAllBytes(H2File.dataFileOf(base))).isEqualTo(before);

    Path killed = copyOfTheKilledFile("twice");
    assertThat(StoreHeaderRepair.repairIfBehind(H2File.dataFileOf(killed)))
        .contains("chunk 153c (version 5436)");
    byte[] repaired = Files.readAllBytes(H2File.dataFileOf(killed));
    assertThat(StoreHeaderRepair.repairIfBehind(H2File.dataFileOf(killed))).isNull();
    assertThat(Files.readAllBytes(H2File.dataFileOf(killed))).isEqualTo(repaired);
  }

  /**
   * Looking at a file this JVM has open through H2 would open and close a channel of our own on
   * it, and on POSIX systems that close drops every lock the process holds on the file, H2's
   * included: another process could then open it too. The look must not happen.
   */
  @Test
  void aLookAtAFileThisJvmHasOpenLeavesH2sLockInPlace() throws Exception {
    Path base = dir.resolve("open");
    Path data = H2File.dataFileOf(base);
    try (H2Database db = H2Database.builder().file(base).multiProcess(false).build()) {
      H2OutboxStore.create(db);
      assertThat(lockSeenByAnotherProcess(data)).as("H2 holds the file").isEqualTo("LOCKED");
      assertThat(dev.outboxreplay.h2.internal.FileCheck.inUse(data)).isTrue();
      assertThat(lockSeenByAnotherProcess(data)).as("after the look").isEqualTo("LOCKED");
    }
    assertThat(dev.outboxreplay.h2.internal.FileCheck.inUse(data)).isFalse();
  }

  /**
   * The takeover path: this JVM has the file open through an {@code H2Database} whose
   * connections went to the process serving it, that process was killed, and the pool's next
   * connection opens the file itself. H2 runs its recovery inside that {@code getConnection},
   * after the library's check at start (which skipped the file: it was in use), and after any
   * look the library could take before the call (the killed process may still hold the file
   * then). The library's URL sends the file through {@link RecoveringFileSystem}, which repairs
   * the header the moment H2 holds the lock, before H2 reads it, through H2's own channel. A
   * plain-file URL on the same file loses the accept.
   */
  @Test
  void aConnectionThatTakesTheFileOverRepairsItsHeaderUnderH2sLock() throws Exception {
    Path base = copyOfTheKilledFile("takeover");
    Path data = H2File.dataFileOf(base);
    H2File.openedHere(data, null); // as a client of the killed process, this JVM "has it open"
    try {
      assertThat(FileCheck.verifyBeforeOpen(data, null, true)).as("skipped: in use").isTrue();
      RetryingOpenDataSource pool = new RetryingOpenDataSource(recoveringUrl(base), null, true,
          H2Database.OPEN_RACE_RETRY);
      try (Connection c = pool.getConnection()) {
        assertThat(rowsAndLastAccept(c)).as("commands, and the accept that had returned before "
            + "the kill").containsExactly(527, 1);
        // H2 holds the file now: a second connection neither repairs again nor drops H2's lock
        try (Connection second = pool.getConnection()) {
          assertThat(rowsAndLastAccept(second)).containsExactly(527, 1);
        }
        assertThat(lockSeenByAnotherProcess(data)).as("after the second connection")
            .isEqualTo("LOCKED");
      }
    } finally {
      H2File.closedHere(data);
    }
    Path plain = copyOfTheKilledFile("takeover-plain");
    RetryingOpenDataSource plainUrl = new RetryingOpenDataSource("jdbc:h2:file:" + plain
        + ";IFEXISTS=TRUE;AUTO_SERVER=TRUE;FILE_LOCK=SOCKET", null, true,
        H2Database.OPEN_RACE_RETRY);
    try (Connection c = plainUrl.getConnection()) {
      assertThat(rowsAndLastAccept(c)).as("plain H2 on the same file").containsExactly(526, 0);
    }
  }

  /**
   * Every open looks at the file behind the name as it is then: a new file is created with
   * nothing to repair, and a file replaced under the same name after a repaired open is looked
   * at again, not taken for the one before.
   */
  @Test
  void everyOpenLooksAtTheFileItFindsNewOrReplaced() throws Exception {
    RetryingOpenDataSource fresh = new RetryingOpenDataSource(
        recoveringUrl(dir.resolve("absent")), null, true, H2Database.OPEN_RACE_RETRY);
    try (Connection c = fresh.getConnection();
        ResultSet rs = c.createStatement().executeQuery("SELECT 1")) {
      assertThat(rs.next()).as("a new file opens").isTrue();
    }
    assertThat(H2File.dataFileOf(dir.resolve("absent"))).exists();
    Path base = copyOfTheKilledFile("replaced");
    Path data = H2File.dataFileOf(base);
    for (int open = 0; open < 2; open++) {
      RetryingOpenDataSource pool = new RetryingOpenDataSource(recoveringUrl(base), null, true,
          H2Database.OPEN_RACE_RETRY);
      try (Connection c = pool.getConnection()) {
        assertThat(rowsAndLastAccept(c)).as("open %d", open).containsExactly(527, 1);
      }
      // the name now points to another file in the same state: it is looked at, not the old one
      Files.delete(data);
      copyResource("header-behind-after-kill.mv.db", data);
    }
  }

  /** The library's URL for a plain file, as the pool opens it in multi-process mode. */
  static String recoveringUrl(Path base) {
    RecoveringFileSystem.register();
    return "jdbc:h2:" + RecoveringFileSystem.SCHEME + ":" + base
        + ";AUTO_SERVER=TRUE;FILE_LOCK=SOCKET";
  }

  /** The number of commands, and 1 when {@link #LAST_ACCEPT} is one of them, else 0. */
  static long[] rowsAndLastAccept(Connection c) throws java.sql.SQLException {
    try (ResultSet rs = c.createStatement().executeQuery(ROWS_AND_LAST_ACCEPT)) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  /**
   * The chain can break after a chunk H2's recovery does reach. The same file with its header
   * naming the chunk before (version 5433 at block 0x35, whose prediction is where 5434 stands):
   * H2 follows 5433 to 5434, whose prediction is wrong, and stops there, short of 5435 and 5436
   * again. A header left naming a chunk whose successor was predicted happens when H2 is killed
   * before the header write of a later break (seen as a lost accept in {@code OutboxSoakTest}).
   * The repair follows the chain as H2 does and goes on from where it ends.
   */
  @Test
  void aHeaderWhoseChainBreaksAfterAPredictedChunkIsRepairedToo() throws Exception {
    Path base = copyOfTheKilledFile("predicted-then-broken");
    Path data = H2File.dataFileOf(base);
    nameInHeader(data, "1539", "35", "1539");
    Path plain = dir.resolve("predicted-then-broken-plain");
    Files.copy(data, H2File.dataFileOf(plain));
    try (Connection c = DriverManager.getConnection("jdbc:h2:file:" + plain + ";IFEXISTS=TRUE",
        "sa", "");
        ResultSet rs = c.createStatement().executeQuery(ROWS_AND_LAST_ACCEPT)) {
      rs.next();
      assertThat(rs.getLong(2)).as("the last accept, as plain H2 opens the file").isZero();
    }
    assertThat(StoreHeaderRepair.repairIfBehind(data))
        .contains("reaches chunk 153a (version 5434)").contains("chunk 153c (version 5436)");
    for (int open = 0; open < 2; open++) {
      try (H2Database db = H2Database.builder().file(base).multiProcess(false).build()) {
        H2OutboxStore store = H2OutboxStore.create(db);
        assertThat(store.find(LAST_ACCEPT)).as("open %d: the accept that had returned", open)
            .isPresent();
        assertThat(store.countByStatus().values().stream().mapToLong(Long::longValue).sum())
            .isEqualTo(527);
      }
    }
  }

  /** Rewrites both store header copies of {@code data} to name another chunk (hex fields). */
  private static void nameInHeader(Path data, String chunk, String block, String version)
      throws Exception {
    byte[] bytes = Files.readAllBytes(data);
    String line = new String(bytes, 0, 4096, StandardCharsets.ISO_8859_1).split("\n")[0].trim();
    java.util.HashMap<String, String> header = new java.util.HashMap<>(
        org.h2.mvstore.DataUtils.parseMap(line));
    header.remove("fletcher");
    header.put("chunk", chunk);
    header.put("block", block);
    header.put("version", version);
    StringBuilder text = org.h2.mvstore.DataUtils.appendMap(new StringBuilder(), header);
    byte[] body = text.toString().getBytes(StandardCharsets.ISO_8859_1);
    org.h2.mvstore.DataUtils.appendMap(text, "fletcher",
        org.h2.mvstore.DataUtils.getFletcher32(body, 0, body.length));
    byte[] out = (text + "\n").getBytes(StandardCharsets.ISO_8859_1);
    for (int copy = 0; copy < 2; copy++) {
      java.util.Arrays.fill(bytes, copy * 4096, (copy + 1) * 4096, (byte) ' ');
      System.arraycopy(out, 0, bytes, copy * 4096, out.length);
    }
    Files.write(data, bytes);
  }

  /**
   * A second file H2 left behind, {@code header-overwritten-after-kill.mv.db}: a child compacting
   * at H2 retention 0 ({@link CompactionKillStressTest}, seed 63055972583788, kill 12) was killed
   * after the chunk its store header names (version 3107, block 0x2b) had died and a newer chunk
   * (3110) had been written in its place, before the header was rewritten. Chunks 3108 and 3109
   * are intact in the file, but H2's recovery finds neither and would open version 3105, so the
   * library refuses the file, naming both versions, and leaves it byte for byte as it was. (Naming
   * 3108 in the header, as for the file above, made H2 open version 3109 with 665 rows, and after
   * a clean close and reopen the newest of them was gone: that repair is not made.)
   */
  @Test
  void aFileWhoseHeaderChunkANewerOneOverwroteIsRefusedAndLeftUntouched() throws Exception {
    Path base = dir.resolve("overwritten");
    copyResource("header-overwritten-after-kill.mv.db", H2File.dataFileOf(base));
    byte[] before = Files.readAllBytes(H2File.dataFileOf(base));
    assertThatThrownBy(() -> H2Database.builder().file(base).multiProcess(false).build())
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("H2 can read only version 3105 of it, older than version 3107");
    assertThat(Files.readAllBytes(H2File.dataFileOf(base))).isEqualTo(before);
  }

  private String lockSeenByAnotherProcess(Path data) throws Exception {
    try (ChildJvm child = ChildJvm.start(TryLockChild.class, dir.resolve("trylock.err"),
        data.toString())) {
      return child.nextLine(Duration.ofSeconds(60));
    }
  }

  private Path copyOfTheKilledFile(String name) throws Exception {
    Path base = dir.resolve(name);
    copyResource("header-behind-after-kill.mv.db", H2File.dataFileOf(base));
    return base;
  }

  /** Copies the committed file {@code files/resource} to {@code target}. */
  private static void copyResource(String resource, Path target) throws Exception {
    try (InputStream in = StoreHeaderRepairTest.class.getResourceAsStream("/files/" + resource)) {
      assertThat(in).as(resource).isNotNull();
      Files.copy(in, target);
    }
  }
}
