package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Encryption at rest: with an application key, a payload's bytes are not in the file (they are
 * in a plain file written the same way), the file reopens with its key, in this process and
 * through another process that serves it, and is refused without it or with another key, left
 * unchanged.
 */
class EncryptionTest {
  private static final String MARKER = "card-4111-1111-1111-1111";
  private static final char[] KEY = "k3y-from-the-os-keychain".toCharArray();

  @TempDir Path dir;

  @Test
  void aPayloadIsNotInTheEncryptedFileAndIsInAPlainOne() throws Exception {
    OutboxRecord accepted = write(H2Database.builder().file(dir.resolve("secret"))
        .encryptionKey(KEY));
    write(H2Database.builder().file(dir.resolve("plain")));
    byte[] marker = MARKER.getBytes(StandardCharsets.UTF_8);
    assertThat(indexOf(Files.readAllBytes(dir.resolve("plain.mv.db")), marker))
        .as("a plain file holds the payload as written (so this test can see it)")
        .isNotNegative();
    assertThat(indexOf(Files.readAllBytes(dir.resolve("secret.mv.db")), marker))
        .as("the encrypted file does not").isNegative();

    try (H2Database db = H2Database.builder().file(dir.resolve("secret")).encryptionKey(KEY)
        .build()) {
      OutboxRecord read = H2OutboxStore.create(db).find(accepted.commandId()).orElseThrow();
      assertThat(new String(read.payload().bytes(), StandardCharsets.UTF_8)).contains(MARKER);
    }
  }

  @Test
  void withoutItsKeyOrWithAnotherTheFileIsRefusedAndLeftAsItWas() throws Exception {
    write(H2Database.builder().file(dir.resolve("secret")).encryptionKey(KEY));
    Path file = dir.resolve("secret.mv.db");
    String before = sha256(file);
    assertThatThrownBy(() -> H2Database.open(dir.resolve("secret")))
        .isInstanceOfSatisfying(OutboxStorageException.class, e -> {
          assertThat(e.retryable()).isFalse();
          assertThat(e.getMessage()).contains("secret.mv.db").contains("encrypt");
        });
    assertThatThrownBy(() -> H2Database.builder().file(dir.resolve("secret"))
        .encryptionKey("another-key".toCharArray()).build())
        .isInstanceOfSatisfying(OutboxStorageException.class, e -> {
          assertThat(e.getMessage()).contains("encryption key may be wrong")
              .doesNotContain("another-key").doesNotContain(new String(KEY));
        });
    assertThat(sha256(file)).isEqualTo(before);
    assertThatThrownBy(() -> H2Database.builder().encryptionKey("has space".toCharArray()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("has space");
  }

  @Test
  void anotherProcessServingTheEncryptedFileIsReachedWithTheKey() throws Exception {
    Path base = dir.resolve("shared");
    try (ChildJvm server = ServeFileChild.serving(base, dir.resolve("server.err"),
        new String(KEY))) {
      try (H2Database db = H2Database.builder().file(base).encryptionKey(KEY).build()) {
        Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
        outbox.accept(OutboxCommand.of("op", "e", Map.of("text", MARKER)));
        assertThat(outbox.store().countByStatus()).containsEntry(Status.QUEUED, 1L);
      }
    }
    assertThat(indexOf(Files.readAllBytes(dir.resolve("shared.mv.db")),
        MARKER.getBytes(StandardCharsets.UTF_8))).isNegative();
  }

  private static OutboxRecord write(H2Database.Builder builder) {
    try (H2Database db = builder.build()) {
      return Outbox.builder(H2OutboxStore.create(db)).build()
          .accept(OutboxCommand.of("payment.capture", "order-1", Map.of("card", MARKER)));
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
