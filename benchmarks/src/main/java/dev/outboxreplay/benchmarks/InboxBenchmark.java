package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Inbox;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2InboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;

/**
 * Inbox costs, all measured in this run on fresh H2 files with the same settings: a first receive
 * (reserve, consume, stage, commit, project, mark projected) next to a raw insert+commit of the
 * same row, and a duplicate receive next to a first receive. The consumer and projector do no
 * work of their own, so the figures are the inbox's own cost.
 */
final class InboxBenchmark {
  private static final String RAW_INSERT = "INSERT INTO inbox_message (scope, message_id, state, "
      + "staged_result, message_hash, consumed_at, updated_at) VALUES (?, ?, 'staged', ?, ?, ?, ?)";

  private final int messages;
  private final int rounds;

  InboxBenchmark(int messages, int rounds) {
    this.messages = messages;
    this.rounds = rounds;
  }

  List<Figure> run() throws Exception {
    System.out.printf("inbox benchmark: %d messages per measurement, %d rounds, 1 thread%n",
        messages, rounds);
    double[] raw = new double[rounds];
    double[] first = new double[rounds];
    double[] duplicate = new double[rounds];
    for (int round = 0; round < rounds; round++) {
      raw[round] = rawInserts();
      double[] inbox = receives();
      first[round] = inbox[0];
      duplicate[round] = inbox[1];
      System.out.printf("  round %d: raw %.0f/s, first receive %.0f/s, duplicate %.0f/s%n",
          round + 1, raw[round], first[round], duplicate[round]);
    }
    double rawRate = BenchSupport.median(raw);
    double firstRate = BenchSupport.median(first);
    double duplicateRate = BenchSupport.median(duplicate);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("raw JDBC insert+commit of the inbox row: %8.0f rows/s (baseline)%n",
        rawRate);
    System.out.printf("first receive                          : %8.0f msgs/s, ratio %.2f "
        + "(two commits: the consume, then the projected mark)%n", firstRate, firstRate / rawRate);
    System.out.printf("duplicate receive                      : %8.0f msgs/s, %.1f x cheaper "
        + "than a first receive (target >= 10)%n", duplicateRate, duplicateRate / firstRate);
    return List.of(Figure.atLeast("duplicate inbox receive", "first receive",
        Figure.ratios(duplicate, first), 10));
  }

  private double rawInserts() throws Exception {
    Path dir = Files.createTempDirectory("inbox-bench");
    try (H2Database db = H2Database.open(dir.resolve("raw"))) {
      H2InboxStore.create(db);
      try (Connection c = db.dataSource().getConnection();
          PreparedStatement ps = c.prepareStatement(RAW_INSERT)) {
        c.setAutoCommit(false);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        long start = 0;
        for (int i = -messages / 4; i < messages; i++) {
          if (i == 0) {
            start = System.nanoTime();
          }
          byte[] body = message(i);
          ps.setString(1, "profile");
          ps.setString(2, "m" + i);
          ps.setBytes(3, body);
          ps.setBytes(4, sha.digest(body));
          ps.setLong(5, System.currentTimeMillis());
          ps.setLong(6, System.currentTimeMillis());
          ps.executeUpdate();
          c.commit();
        }
        return messages / ((System.nanoTime() - start) / 1e9);
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private double[] receives() throws Exception {
    Path dir = Files.createTempDirectory("inbox-bench");
    try (H2Database db = H2Database.open(dir.resolve("inbox"))) {
      Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db),
          (Connection tx, dev.outboxreplay.InboxMessage m) -> m.bytes(),
          (scope, id, staged) -> { }).build();
      for (int i = -messages / 4; i < 0; i++) {
        inbox.receive("profile", "m" + i, message(i));
      }
      long start = System.nanoTime();
      for (int i = 0; i < messages; i++) {
        inbox.receive("profile", "m" + i, message(i));
      }
      double firstRate = messages / ((System.nanoTime() - start) / 1e9);
      start = System.nanoTime();
      for (int i = 0; i < messages; i++) {
        inbox.receive("profile", "m" + i, message(i));
      }
      double duplicateRate = messages / ((System.nanoTime() - start) / 1e9);
      return new double[] {firstRate, duplicateRate};
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private static byte[] message(int i) {
    return ("ciphertext of message " + i + " " + "x".repeat(200)).getBytes(StandardCharsets.UTF_8);
  }

}
