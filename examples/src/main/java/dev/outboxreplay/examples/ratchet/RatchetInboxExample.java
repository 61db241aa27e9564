package dev.outboxreplay.examples.ratchet;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcInboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Receiving ratchet-encrypted messages through the inbox: the chain state and the processed inbox
 * live in one database file ({@code crypto}), the readable history in another ({@code history}).
 * Every message is delivered twice or more; each is decrypted once, and stored once. The SQL is
 * plain enough for H2 and SQLite alike.
 */
public final class RatchetInboxExample {
  /** What a run did, for printing and for tests. */
  public record Report(int deliveries, int consumed, int duplicates, long historyRows,
      String rawRedecryptError) {}

  private RatchetInboxExample() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args.length > 0 ? args[0] : "ratchet-example-data");
    Report r = run(dir, 5);
    System.out.printf("deliveries %d, decrypted %d, duplicates suppressed %d, history rows %d%n",
        r.deliveries(), r.consumed(), r.duplicates(), r.historyRows());
    System.out.println("decrypting a consumed ciphertext again without the inbox: "
        + r.rawRedecryptError());
  }

  /**
   * Sends {@code messages} messages, delivers each of them 1 + (i % 3) times, and reports; both
   * databases are H2 files in {@code dir}.
   */
  public static Report run(Path dir, int messages) throws Exception {
    return run(dir, messages, H2Database::open);
  }

  /**
   * As {@link #run(Path, int)}, with the databases {@code open} returns for {@code
   * dir.resolve("crypto")} and {@code dir.resolve("history")} (it picks the engine and the file
   * name); they are closed before this returns.
   */
  public static Report run(Path dir, int messages,
      Function<Path, ? extends JdbcDatabase> open) throws Exception {
    byte[] sharedChainKey = new byte[32];
    for (int i = 0; i < sharedChainKey.length; i++) {
      sharedChainKey[i] = (byte) (i * 7 + 3); // agreed out of band in a real protocol
    }
    String scope = "alice@laptop";
    try (JdbcDatabase crypto = open.apply(dir.resolve("crypto"));
        JdbcDatabase history = open.apply(dir.resolve("history"))) {
      try (Connection c = crypto.dataSource().getConnection()) {
        SymmetricRatchet.install(c, scope, sharedChainKey);
      }
      try (Connection c = history.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS chat_message (scope VARCHAR, message_id VARCHAR, "
            + "text VARCHAR, PRIMARY KEY (scope, message_id))");
      }
      Inbox<Connection> inbox = Inbox.builder(JdbcInboxStore.create(crypto),
          (Connection tx, dev.outboxreplay.InboxMessage m) ->
              SymmetricRatchet.decrypt(tx, m.scope(), m.bytes()),
          (sc, id, plaintext) -> {
            // The projection may run again for a message (replay): write it, never add it twice.
            try (Connection c = history.dataSource().getConnection()) {
              int updated;
              try (PreparedStatement ps = c.prepareStatement(
                  "UPDATE chat_message SET text = ? WHERE scope = ? AND message_id = ?")) {
                ps.setString(1, new String(plaintext, StandardCharsets.UTF_8));
                ps.setString(2, sc);
                ps.setString(3, id);
                updated = ps.executeUpdate();
              }
              if (updated == 0) {
                try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO chat_message (scope, message_id, text) VALUES (?, ?, ?)")) {
                  ps.setString(1, sc);
                  ps.setString(2, id);
                  ps.setString(3, new String(plaintext, StandardCharsets.UTF_8));
                  ps.executeUpdate();
                }
              }
            }
          }).build();

      SymmetricRatchet.Sender sender = new SymmetricRatchet.Sender(sharedChainKey);
      List<byte[]> ciphertexts = new ArrayList<>();
      for (int i = 0; i < messages; i++) {
        ciphertexts.add(sender.encrypt(("hello #" + i).getBytes(StandardCharsets.UTF_8)));
      }
      int deliveries = 0;
      int consumed = 0;
      int duplicates = 0;
      for (int i = 0; i < messages; i++) {
        for (int copy = 0; copy <= i % 3; copy++) {
          ReceiveResult result = inbox.receive(scope, "msg-" + i, ciphertexts.get(i));
          deliveries++;
          if (result.outcome() == ReceiveResult.Outcome.CONSUMED) {
            consumed++;
          } else {
            duplicates++;
          }
        }
      }
      String rawError;
      try (Connection c = crypto.dataSource().getConnection()) {
        SymmetricRatchet.decrypt(c, scope, ciphertexts.get(0));
        rawError = "(none: it decrypted again, which must not happen)";
      } catch (GeneralSecurityException expected) {
        rawError = expected.getMessage();
      }
      return new Report(deliveries, consumed, duplicates, countRows(history), rawError);
    }
  }

  private static long countRows(JdbcDatabase history) throws SQLException {
    try (Connection c = history.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM chat_message")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
