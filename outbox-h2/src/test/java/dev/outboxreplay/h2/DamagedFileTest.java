package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStorageException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Copies of a real outbox file (200 queued commands, written and closed by the library) are
 * damaged the way disks, copies and other programs damage files, then opened. Each damaged copy
 * must be refused with a fatal error naming the file, and its bytes must be exactly what they
 * were: nothing opens it as an empty or older outbox, nothing writes to it. Before this check,
 * zeroed chunk headers opened as an empty outbox and three other patterns opened at an older
 * version, each time rewriting the file.
 */
class DamagedFileTest {
  private static final int BLOCK = 4096;
  private static final Pattern HEADER_BLOCK = Pattern.compile("block:([0-9a-f]+)");

  @TempDir Path dir;
  byte[] original;

  /** How a copy is damaged. */
  enum Damage {
    /** 512 random bytes inside the chunk the store header names (the newest). */
    RANDOM_BYTES_IN_NEWEST_CHUNK(DamagedFileTest::randomBytesInNewestChunk),
    /** The file cut at 60% of its length. */
    TRUNCATED(bytes -> Arrays.copyOf(bytes, bytes.length * 6 / 10)),
    /** Every chunk header's "chunk:" marker zeroed. */
    ZEROED_CHUNK_HEADERS(bytes -> zeroMarkers(bytes, true)),
    /** Every other "chunk:" line (chunk footers, the store header's fields) zeroed. */
    ZEROED_CHUNK_FOOTERS(bytes -> zeroMarkers(bytes, false)),
    /** Both store header blocks (the first 8 KiB) zeroed. */
    ZEROED_STORE_HEADER(bytes -> zero(bytes, 0, 2 * BLOCK)),
    /** The last 8 KiB zeroed. */
    ZEROED_LAST_BLOCKS(bytes -> zero(bytes, bytes.length - 2 * BLOCK, bytes.length)),
    /** Random bytes of the same length: not an H2 file. */
    RANDOM_FILE(bytes -> {
      byte[] noise = new byte[bytes.length];
      new Random(11).nextBytes(noise);
      return noise;
    }),
    /** A 0-byte file. */
    EMPTY(bytes -> new byte[0]);

    final UnaryOperator<byte[]> apply;

    Damage(UnaryOperator<byte[]> apply) {
      this.apply = apply;
    }
  }

  @BeforeEach
  void writeARealFile() throws Exception {
    Path base = dir.resolve("original");
    try (H2Database db = H2Database.open(base)) {
      acceptTwoHundred(db);
    }
    original = Files.readAllBytes(dir.resolve("original.mv.db"));
  }

  /** The commands of the test's real file, accepted one by one into {@code db}. */
  static void acceptTwoHundred(H2Database db) {
    Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
    for (int i = 0; i < 200; i++) {
      outbox.accept(OutboxCommand.of("note.put", "note-" + (i % 7),
          Map.of("n", i, "text", "payload " + i)));
    }
  }

  @Test
  void anUndamagedCopyOpensWithEveryCommand() {
    Path copy = write("intact", original);
    try (H2Database db = H2Database.open(copy)) {
      assertThat(H2OutboxStore.create(db).countByStatus().values().stream()
          .mapToLong(Long::longValue).sum()).isEqualTo(200);
    }
  }

  @ParameterizedTest
  @EnumSource(Damage.class)
  void aDamagedCopyIsRefusedAndLeftByteForByteAsItWas(Damage damage) throws Exception {
    byte[] damaged = damage.apply.apply(original.clone());
    Path copy = write(damage.name().toLowerCase(), damaged);
    String before = sha256(copy);
    assertThatThrownBy(() -> {
      try (H2Database db = H2Database.open(copy)) {
        H2OutboxStore.create(db).countByStatus();
      }
    }).isInstanceOfSatisfying(OutboxStorageException.class, e -> {
      assertThat(e.getMessage()).contains(copy.toString());
      assertThat(e.retryable()).as(e.getMessage()).isFalse();
      System.out.println(damage + ": " + e.getMessage());
    });
    assertThat(sha256(copy)).as("%s: the refused file is unchanged", damage).isEqualTo(before);
    assertThat(dir.resolve(damage.name().toLowerCase() + ".mv.db")).exists();
  }

  /**
   * H2 names the file by its real path; the application's path goes through a symbolic link (as
   * macOS's temporary folders do). What H2 writes during its failed open is undone all the same.
   */
  @Test
  void aFailedOpenThroughASymbolicLinkIsUndoneToo() throws Exception {
    Path real = Files.createDirectories(dir.resolve("real"));
    Path link = Files.createSymbolicLink(dir.resolve("link"), real);
    Files.write(real.resolve("linked.mv.db"), randomBytesInNewestChunk(original.clone()));
    Path copy = link.resolve("linked.mv.db");
    String before = sha256(copy);
    assertThatThrownBy(() -> {
      try (H2Database db = H2Database.open(link.resolve("linked"))) {
        H2OutboxStore.create(db).countByStatus();
      }
    }).isInstanceOf(OutboxStorageException.class);
    assertThat(sha256(copy)).as("the refused file, reached through the link").isEqualTo(before);
  }

  private Path write(String name, byte[] bytes) {
    try {
      Path file = dir.resolve(name + ".mv.db");
      Files.write(file, bytes);
      return file;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** 512 random bytes (seed 7) inside the chunk the store header of {@code bytes} names. */
  static byte[] randomBytesInNewestChunk(byte[] bytes) {
    String header = new String(bytes, 0, BLOCK, StandardCharsets.ISO_8859_1);
    Matcher m = HEADER_BLOCK.matcher(header);
    assertThat(m.find()).as("the store header names the newest chunk's block").isTrue();
    int at = Integer.parseInt(m.group(1), 16) * BLOCK + 256;
    byte[] noise = new byte[512];
    new Random(7).nextBytes(noise);
    System.arraycopy(noise, 0, bytes, at, noise.length);
    return bytes;
  }

  /** Zeroes the "chunk:" markers at block starts (headers) or everywhere else (footers). */
  private static byte[] zeroMarkers(byte[] bytes, boolean atBlockStart) {
    byte[] marker = "chunk:".getBytes(StandardCharsets.US_ASCII);
    int zeroed = 0;
    for (int i = 0; i + marker.length <= bytes.length; i++) {
      if ((i % BLOCK == 0) == atBlockStart
          && Arrays.equals(bytes, i, i + marker.length, marker, 0, marker.length)) {
        Arrays.fill(bytes, i, Math.min(bytes.length, i + (atBlockStart ? 6 : 128)), (byte) 0);
        zeroed++;
      }
    }
    assertThat(zeroed).as("markers found").isPositive();
    return bytes;
  }

  private static byte[] zero(byte[] bytes, int from, int to) {
    Arrays.fill(bytes, from, to, (byte) 0);
    return bytes;
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

}
