package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.examples.ratchet.RatchetInboxExample;
import dev.outboxreplay.examples.ratchet.SymmetricRatchet;
import dev.outboxreplay.h2.H2Database;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.sql.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RatchetInboxExampleTest {
  @TempDir Path dir;

  @Test
  void theRatchetRefusesToDecryptAConsumedCiphertextAgainAndTamperedOnes() throws Exception {
    byte[] key = new byte[32];
    SymmetricRatchet.Sender sender = new SymmetricRatchet.Sender(key);
    byte[] first = sender.encrypt("one".getBytes(StandardCharsets.UTF_8));
    byte[] second = sender.encrypt("two".getBytes(StandardCharsets.UTF_8));
    try (H2Database db = H2Database.open(dir.resolve("r"));
        Connection c = db.dataSource().getConnection()) {
      SymmetricRatchet.install(c, "s", key);
      byte[] tampered = second.clone();
      tampered[tampered.length - 1] ^= 1;
      assertThat(new String(SymmetricRatchet.decrypt(c, "s", first), StandardCharsets.UTF_8))
          .isEqualTo("one");
      assertThatThrownBy(() -> SymmetricRatchet.decrypt(c, "s", first))
          .isInstanceOf(GeneralSecurityException.class).hasMessageContaining("already consumed");
      assertThatThrownBy(() -> SymmetricRatchet.decrypt(c, "s", tampered))
          .isInstanceOf(GeneralSecurityException.class);
      assertThat(new String(SymmetricRatchet.decrypt(c, "s", second), StandardCharsets.UTF_8))
          .isEqualTo("two");
    }
  }

  @Test
  void theInboxMakesDuplicateDeliveriesHarmless() throws Exception {
    RatchetInboxExample.Report report = RatchetInboxExample.run(dir, 9);
    assertThat(report.deliveries()).isEqualTo(18);
    assertThat(report.consumed()).isEqualTo(9);
    assertThat(report.duplicates()).isEqualTo(9);
    assertThat(report.historyRows()).isEqualTo(9);
    assertThat(report.rawRedecryptError()).contains("already consumed");
  }
}
