package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.h2.internal.EncryptedCopy;
import dev.outboxreplay.h2.internal.FileCheck;
import dev.outboxreplay.h2.internal.H2File;
import dev.outboxreplay.h2.internal.RetryingOpenDataSource;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.Arrays;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files H2 left behind that {@link StoreHeaderRepairTest} and {@link CleanCloseRepairTest}
 * open, encrypted block for block under an application key (as H2 writes a file opened with
 * {@code CIPHER=AES}): H2 alone loses the same commits from them, and the library, given the
 * key, keeps them, at both moments it looks (before its first open, and under H2's lock when H2
 * takes the file over itself). A wrong key changes nothing.
 */
class EncryptedFileRepairTest {
  private static final char[] KEY = "correct-horse-battery".toCharArray();
  private static final char[] OTHER_KEY = "another-key-entirely".toCharArray();
  /** The first bytes of an encrypted file: H2's encryption header, then the store header. */
  private static final int ENCRYPTION_HEADER = 4096;
  private static final int STORE_HEADER = 2 * 4096;

  @TempDir Path dir;

  @Test
  void h2AloneOpensTheEncryptedKilledFileWithoutItsLastAccept() throws Exception {
    Path base = encryptedCopy("header-behind-after-kill.mv.db", "plain");
    try (Connection c = h2Alone(base)) {
      // if this fails, H2's recovery no longer has the gap for encrypted files either
      assertThat(StoreHeaderRepairTest.rowsAndLastAccept(c)).containsExactly(526, 0);
    }
  }

  @Test
  void theCheckBeforeTheOpenRepairsTheEncryptedKilledFile() throws Exception {
    Path base = encryptedCopy("header-behind-after-kill.mv.db", "check");
    assertThat(FileCheck.verifyBeforeOpen(H2File.dataFileOf(base), KEY, true)).as("in use")
        .isFalse();
    try (Connection c = h2Alone(base)) {
      assertThat(StoreHeaderRepairTest.rowsAndLastAccept(c)).as("H2 alone after the check").containsExactly(527, 1);
    }
  }

  @Test
  void theLibraryOpensTheEncryptedKilledFileWithItsLastAccept() throws Exception {
    Path base = encryptedCopy("header-behind-after-kill.mv.db", "app");
    StoreHeaderRepairTest.assertTwoOpensKeepTheLastAccept(() -> H2Database.builder().file(base)
        .multiProcess(false).encryptionKey(KEY).build());
  }

  /**
   * The takeover path of {@link StoreHeaderRepairTest}: the check before the open skipped the
   * file (in use), and H2 opens it inside {@code getConnection}. The look under H2's lock reads
   * it with the key this JVM's open registered.
   */
  @Test
  void aConnectionThatTakesTheEncryptedFileOverRepairsItUnderH2sLock() throws Exception {
    Path base = encryptedCopy("header-behind-after-kill.mv.db", "takeover");
    assertThat(takenOverWithTheKeyRegistered(base)).containsExactly(527, 1);
    // the same file and URL with no key registered: the look cannot read it, H2 alone decides
    Path unregistered = encryptedCopy("header-behind-after-kill.mv.db", "takeover-no-key");
    RetryingOpenDataSource pool = new RetryingOpenDataSource(recoveringUrl(unregistered), KEY,
        true, H2Database.OPEN_RACE_RETRY);
    try (Connection c = pool.getConnection()) {
      assertThat(StoreHeaderRepairTest.rowsAndLastAccept(c)).containsExactly(526, 0);
    }
  }

  /**
   * H2 names a file by its real path (it resolves symbolic links, as macOS's temporary folders
   * need): the key registered under the path the application gave is found for it all the same.
   */
  @Test
  void theKeyIsFoundWhenTheFileIsReachedThroughASymbolicLink() throws Exception {
    Path real = Files.createDirectories(dir.resolve("real"));
    Path link = Files.createSymbolicLink(dir.resolve("link"), real);
    encryptedCopy("header-behind-after-kill.mv.db", "real/linked");
    assertThat(takenOverWithTheKeyRegistered(link.resolve("linked"))).containsExactly(527, 1);
  }

  /**
   * Takes the file at {@code base} over inside {@code getConnection}, as a client of a killed
   * serving process does (the check before the open skips a file this JVM has open), with the
   * key registered as an {@code H2Database}'s open registers it; the commands and the last
   * accept it then reads.
   */
  private static long[] takenOverWithTheKeyRegistered(Path base) throws Exception {
    Path data = H2File.dataFileOf(base);
    H2File.openedHere(data, KEY);
    try {
      assertThat(FileCheck.verifyBeforeOpen(data, KEY, true)).as("skipped: in use").isTrue();
      RetryingOpenDataSource pool = new RetryingOpenDataSource(recoveringUrl(base), KEY, true,
          H2Database.OPEN_RACE_RETRY);
      try (Connection c = pool.getConnection()) {
        return StoreHeaderRepairTest.rowsAndLastAccept(c);
      }
    } finally {
      H2File.closedHere(data);
    }
  }

  @Test
  void aCleanlyClosedEncryptedFileH2WouldOpenOlderIsMendedInItsStoreHeaderOnly()
      throws Exception {
    Path base = encryptedCopy("clean-close-lists-overwritten-dead-chunk.mv.db", "clean-plain");
    try (Connection c = h2Alone(base)) {
      assertThat(commands(c)).as("H2 alone, at an older version").isEqualTo(35);
    }
    Path mended = encryptedCopy("clean-close-lists-overwritten-dead-chunk.mv.db", "clean-app");
    Path data = H2File.dataFileOf(mended);
    byte[] before = Files.readAllBytes(data);
    assertThat(FileCheck.verifyBeforeOpen(data, KEY, true)).as("in use").isFalse();
    byte[] after = Files.readAllBytes(data);
    int headerEnd = ENCRYPTION_HEADER + STORE_HEADER;
    assertThat(Arrays.equals(before, 0, headerEnd, after, 0, headerEnd))
        .as("the store header was rewritten").isFalse();
    assertThat(Arrays.copyOfRange(after, headerEnd, after.length))
        .as("every byte after the store header").isEqualTo(
            Arrays.copyOfRange(before, headerEnd, before.length));
    assertThat(Arrays.copyOfRange(after, 0, ENCRYPTION_HEADER)).as("the encryption header")
        .isEqualTo(Arrays.copyOfRange(before, 0, ENCRYPTION_HEADER));
    try (Connection c = h2Alone(mended)) {
      assertThat(commands(c)).as("H2 alone after the mend").isEqualTo(38);
    }
  }

  @Test
  void theCleanCloseMendRunsUnderH2sLockForAnEncryptedFile() throws Exception {
    Path base = encryptedCopy("clean-close-lists-overwritten-dead-chunk.mv.db", "clean-takeover");
    Path data = H2File.dataFileOf(base);
    H2File.openedHere(data, KEY);
    try {
      RetryingOpenDataSource pool = new RetryingOpenDataSource(recoveringUrl(base), KEY, true,
          H2Database.OPEN_RACE_RETRY);
      try (Connection c = pool.getConnection()) {
        assertThat(commands(c)).isEqualTo(38);
      }
    } finally {
      H2File.closedHere(data);
    }
  }

  @Test
  void aWrongKeyIsRefusedAndTheFileLeftByteForByte() throws Exception {
    for (String resource : new String[] {"header-behind-after-kill.mv.db",
        "clean-close-lists-overwritten-dead-chunk.mv.db"}) {
      Path base = encryptedCopy(resource, "wrong-" + resource.substring(0, 5));
      byte[] before = Files.readAllBytes(H2File.dataFileOf(base));
      assertThatThrownBy(() -> H2Database.builder().file(base).multiProcess(false)
          .encryptionKey(OTHER_KEY).build()).isInstanceOf(OutboxStorageException.class);
      assertThat(Files.readAllBytes(H2File.dataFileOf(base))).as(resource).isEqualTo(before);
    }
  }

  /**
   * {@code DamagedFileTest}'s random bytes in the newest chunk, in an encrypted file: H2's open
   * fails on a page it reads and writes a chunk and a store header on its way out. The library's
   * pool reaches an encrypted file through its own file system too, so those writes are undone.
   */
  @Test
  void aFailedOpenOfADamagedEncryptedFileLeavesItByteForByte() throws Exception {
    Path original = dir.resolve("original");
    try (H2Database db = H2Database.builder().file(original).encryptionKey(KEY).build()) {
      DamagedFileTest.acceptTwoHundred(db);
    }
    byte[] plain = EncryptedCopy.read(H2File.dataFileOf(original), KEY);
    Path damaged = dir.resolve("damaged");
    EncryptedCopy.write(DamagedFileTest.randomBytesInNewestChunk(plain),
        H2File.dataFileOf(damaged), KEY);
    byte[] before = Files.readAllBytes(H2File.dataFileOf(damaged));
    assertThatThrownBy(() -> {
      try (H2Database db = H2Database.builder().file(damaged).encryptionKey(KEY).build()) {
        H2OutboxStore.create(db).countByStatus();
      }
    }).isInstanceOf(OutboxStorageException.class);
    assertThat(Files.readAllBytes(H2File.dataFileOf(damaged))).as("the refused file")
        .isEqualTo(before);
  }

  /** An encrypted copy of the kept file {@code files/resource}, as {@code dir/name.mv.db}. */
  private Path encryptedCopy(String resource, String name) throws Exception {
    byte[] plain;
    try (InputStream in = getClass().getResourceAsStream("/files/" + resource)) {
      assertThat(in).as(resource).isNotNull();
      plain = in.readAllBytes();
    }
    Path base = dir.resolve(name);
    EncryptedCopy.write(plain, H2File.dataFileOf(base), KEY);
    assertThat(EncryptedCopy.read(H2File.dataFileOf(base), KEY)).as("decrypted back")
        .isEqualTo(plain);
    assertThat(Files.readAllBytes(H2File.dataFileOf(base))).as("not the plain bytes")
        .isNotEqualTo(plain);
    return base;
  }

  /** A connection of H2 alone (its own file URL, no library), with the key. */
  private static Connection h2Alone(Path base) throws Exception {
    return DriverManager.getConnection("jdbc:h2:file:" + base + ";CIPHER=AES;IFEXISTS=TRUE",
        credentials());
  }

  /** The library's URL for an encrypted file, as the pool opens it in multi-process mode. */
  private static String recoveringUrl(Path base) {
    return StoreHeaderRepairTest.recoveringUrl(base) + ";CIPHER=AES";
  }

  private static Properties credentials() {
    Properties p = new Properties();
    p.setProperty("user", "sa");
    p.setProperty("password", new String(KEY) + " "); // file password, space, user password
    return p;
  }

  private static long commands(Connection c) throws Exception {
    try (ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM outbox_command")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
