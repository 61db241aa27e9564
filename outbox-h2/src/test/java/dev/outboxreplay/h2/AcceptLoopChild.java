package dev.outboxreplay.h2;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;

/**
 * Child process for {@link AcceptCrashTest}: accepts commands forever and prints
 * {@code ACK <commandId> <sha256> <round> <n> END} after each {@code accept} returns. After every
 * fifth accept it claims one row, prints {@code TOKEN <fencingToken> END} and gives the row back.
 * With a third argument {@code compact}, H2's retention time is 0 (a chunk freed is reusable at
 * once), every accept also writes and deletes a 4 KB filler row (dead space), and another thread
 * compacts the file without pause, printing {@code COMPACTED <bytes> END} whenever it shrank.
 * An optional fourth argument sets H2's retention time in ms instead ({@code default} leaves
 * H2's 45 s), a fifth, {@code nocompactor}, leaves out the compacting thread, and a sixth,
 * {@code encrypted}, opens the file with {@link #TEST_KEY}.
 * It is killed with SIGKILL; it never exits on its own.
 */
public final class AcceptLoopChild {
  /** The encryption key of the {@code encrypted} mode: a fixed test value, not a secret. */
  static final char[] TEST_KEY = "accept-loop-test-key".toCharArray();

  private AcceptLoopChild() {}

  /** The payload of command {@code n} in {@code round}; the parent recomputes it to compare. */
  public static String payloadJson(int round, int n) {
    return "{\"n\":" + n + ",\"round\":" + round + ",\"text\":\"" + "x".repeat(n % 64) + "\"}";
  }

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    int round = Integer.parseInt(args[1]);
    PrintStream out = System.out;
    out.println("OPENING");
    out.flush();
    boolean compact = args.length > 2 && args[2].equals("compact");
    H2Database.Builder builder = H2Database.builder().file(file).multiProcess(false)
        .compaction(false);
    if (args.length > 5 && args[5].equals("encrypted")) {
      builder.encryptionKey(TEST_KEY);
    }
    try (H2Database db = builder.build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      if (compact) {
        String retention = args.length > 3 ? args[3] : "0";
        boolean compactor = !(args.length > 4 && args[4].equals("nocompactor"));
        startCompacting(db, out, retention, compactor);
      }
      for (int n = 0; ; n++) {
        if (compact) {
          writeAndDeleteFiller(db, n);
        }
        OutboxRecord r = outbox.accept(
            OutboxCommand.ofJson("note.put", "entity-" + (n % 7), payloadJson(round, n)));
        synchronized (out) {
          out.println("ACK " + r.commandId() + " " + r.payload().sha256Hex() + " " + round + " "
              + n + " END");
          out.flush();
        }
        if (n % 5 == 4) {
          Instant now = Instant.now();
          for (OutboxRecord held : store.claim("child-" + round, Duration.ofMinutes(10), 1, now)) {
            synchronized (out) {
              out.println("TOKEN " + held.fencingToken() + " END");
              out.flush();
            }
            store.release(held.commandId(), held.fencingToken(), now, now);
          }
        }
      }
    }
  }

  private static void startCompacting(H2Database db, PrintStream out, String retention,
      boolean compacting) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      if (!retention.equals("default")) {
        s.execute("SET RETENTION_TIME " + Integer.parseInt(retention));
      }
      s.execute("CREATE TABLE IF NOT EXISTS filler (id INT PRIMARY KEY, body VARBINARY(4096))");
    }
    if (!compacting) {
      return;
    }
    Thread compactor = new Thread(() -> {
      while (true) {
        long shrunk = db.compactFile();
        if (shrunk > 0) {
          synchronized (out) {
            out.println("COMPACTED " + shrunk + " END");
            out.flush();
          }
        }
      }
    }, "compactor");
    compactor.setDaemon(true);
    compactor.start();
  }

  /** Writes filler row {@code n} in a commit of its own, and deletes the one before it. */
  private static void writeAndDeleteFiller(H2Database db, int n) throws java.sql.SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement insert = c.prepareStatement("MERGE INTO filler VALUES (?, ?)");
        PreparedStatement delete = c.prepareStatement("DELETE FROM filler WHERE id < ?")) {
      insert.setInt(1, n);
      insert.setBytes(2, new byte[4096]);
      insert.executeUpdate();
      delete.setInt(1, n);
      delete.executeUpdate();
    }
  }
}
