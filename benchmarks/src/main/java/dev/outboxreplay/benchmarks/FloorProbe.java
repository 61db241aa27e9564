package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The least database work any replayer on this table does per command, with no HTTP at all: a
 * row is recorded {@code sending} before its request may leave and its answer after it returns,
 * each durable ({@code WRITE_DELAY=0}). The probe shares every commit as widely as 8 senders
 * allow: one commit records the answers of the last {@code group} rows and marks the next
 * {@code group} sending. Two plain conditional {@code UPDATE}s per command, no lease recovery, no
 * candidate read, no order between rows of an entity; the second variant adds one audit row per
 * transition, as the library writes; the third also claims each row first (fencing token and
 * lease, audited), in the commit that marks it sending: the states the library's rows go through.
 *
 * <p>The CPU time per command printed here, added to a raw HTTP loop's CPU time per command on
 * the same machine, bounds what a replayer on this table can reach on it when CPU is the limit.
 * It runs on either engine, through the engine's dialect for the fencing token and the ids.
 */
final class FloorProbe {
  /** The claim's update, with the engine's next fencing token. */
  static String claim(Dialect dialect) {
    return "UPDATE outbox_command SET status = '"
        + Status.CLAIMED.wireName() + "', claimed_from = '" + Status.QUEUED.wireName() + "', "
        + "claim_owner = 'floor', fencing_token = " + dialect.nextFencingToken() + ", "
        + "lease_expires_at = ?, updated_at = ? WHERE command_id = ? AND status = '"
        + Status.QUEUED.wireName() + "'";
  }

  static final String MARK = "UPDATE outbox_command SET status = '"
      + Status.SENDING.wireName() + "', lease_expires_at = ?, updated_at = ? "
      + "WHERE command_id = ? AND status = ?";
  static final String ANSWER = "UPDATE outbox_command SET status = '"
      + Status.ACKED.wireName() + "', response_status = 201, response_body = ?, "
      + "lease_expires_at = NULL, updated_at = ? WHERE command_id = ? AND status = '"
      + Status.SENDING.wireName() + "'";
  static final String AUDIT = "INSERT INTO outbox_audit (command_id, idempotency_key, "
      + "from_status, to_status, fencing_token, reason, at) VALUES (?, ?, ?, ?, 0, ?, ?)";
  private static final byte[] RESPONSE = "{\"ok\":true}".getBytes(StandardCharsets.UTF_8);

  /** What each variant writes per command. */
  private enum Variant {
    /** queued to sending to acked. */
    PLAIN,
    /** The same, with an audit row per transition. */
    AUDITED,
    /** queued to claimed (fencing token, lease) to sending to acked, audited: the states. */
    CLAIMED
  }

  private final int commands;
  private final int group;
  private final int rounds;
  private final BenchEngine engine;

  FloorProbe(int commands, int group, int rounds) {
    this(commands, group, rounds, BenchEngine.H2);
  }

  FloorProbe(int commands, int group, int rounds, BenchEngine engine) {
    this.commands = commands;
    this.group = group;
    this.rounds = rounds;
    this.engine = engine;
  }

  record Row(UUID id, String key) {}

  List<Figure> run() throws Exception {
    System.out.printf("floor probe (%s): %,d commands over 100 entities, %d answers and %d marks "
        + "per commit, %d rounds after two warm-up rounds, %d cores%n", engine, commands, group,
        group, rounds, Runtime.getRuntime().availableProcessors());
    for (int warmUp = 0; warmUp < 2; warmUp++) { // until the engine's write path is compiled
      for (Variant v : Variant.values()) {
        measure(v);
      }
    }
    double[][] cpu = new double[Variant.values().length][rounds];
    for (int round = 0; round < rounds; round++) {
      for (Variant v : Variant.values()) {
        cpu[v.ordinal()][round] = measure(v);
      }
      System.out.printf("  round %d: %.0f us CPU per command, %.0f with audit rows, %.0f also "
          + "claimed first%n", round + 1, cpu[0][round], cpu[1][round], cpu[2][round]);
    }
    String unit = "microseconds of process CPU per command";
    String on = engine == BenchEngine.H2 ? "" : " (" + engine + ")";
    return List.of(
        Figure.reported("durable floor" + on + ": sending, acked; us CPU", unit, cpu[0]),
        Figure.reported("durable floor" + on + ": sending, acked, audited; us CPU", unit, cpu[1]),
        Figure.reported("durable floor" + on + ": claimed, sending, acked, audited; us CPU", unit,
            cpu[2]));
  }

  /** Process CPU microseconds per command of {@code variant}'s writes, on a fresh backlog. */
  private double measure(Variant variant) throws Exception {
    boolean audit = variant != Variant.PLAIN;
    boolean claim = variant == Variant.CLAIMED;
    Path dir = Files.createTempDirectory("floor-probe");
    try (JdbcDatabase db = engine.open(dir.resolve("client"), 8,
        Durability.PROCESS_CRASH_SAFE)) {
      Dialect dialect = db.dialect();
      Outbox<Connection> outbox = Outbox.builder(JdbcOutboxStore.create(db)).build();
      BenchSupport.acceptBacklog(outbox, commands, n -> OutboxCommand.ofJson("note.put",
          "e" + (n % 100), "{\"body\":\"" + "lorem ipsum ".repeat(8) + "\",\"n\":" + n + "}"),
          false);
      try (Connection c = db.dataSource().getConnection()) {
        List<Row> rows = rows(c, dialect);
        c.setAutoCommit(false);
        long cpu = BenchSupport.processCpuNanos();
        List<Row> inFlight = List.of();
        // one pass more than the groups: its commit records the answers of the last group
        for (int first = 0; first <= rows.size(); first += group) {
          List<Row> next = rows.subList(Math.min(first, rows.size()),
              Math.min(first + group, rows.size()));
          long now = System.currentTimeMillis();
          try (PreparedStatement answer = c.prepareStatement(ANSWER);
              PreparedStatement claimed = c.prepareStatement(claim(dialect));
              PreparedStatement mark = c.prepareStatement(MARK);
              PreparedStatement trail = c.prepareStatement(AUDIT)) {
            for (Row r : inFlight) {
              answer.setBytes(1, RESPONSE);
              answer.setLong(2, now);
              dialect.setId(answer, 3, r.id());
              updateOne(answer, r);
              if (audit) {
                audit(trail, dialect, r, Status.SENDING, Status.ACKED, Reason.ACKED, now);
              }
            }
            for (Row r : next) {
              if (claim) {
                dialect.advanceFencingToken(c);
                claimed.setLong(1, now + 30_000);
                claimed.setLong(2, now);
                dialect.setId(claimed, 3, r.id());
                updateOne(claimed, r);
                audit(trail, dialect, r, Status.QUEUED, Status.CLAIMED, Reason.CLAIMED, now);
              }
              Status previous = claim ? Status.CLAIMED : Status.QUEUED;
              mark.setLong(1, now + 30_000);
              mark.setLong(2, now);
              dialect.setId(mark, 3, r.id());
              mark.setString(4, previous.wireName());
              updateOne(mark, r);
              if (audit) {
                audit(trail, dialect, r, previous, Status.SENDING, Reason.SENDING, now);
              }
            }
          }
          c.commit();
          inFlight = next;
        }
        return (BenchSupport.processCpuNanos() - cpu) / 1e3 / commands;
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  static List<Row> rows(Connection c, Dialect dialect) throws SQLException {
    List<Row> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT command_id, idempotency_key FROM outbox_command ORDER BY seq");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rows.add(new Row(dialect.getId(rs, 1), rs.getString(2)));
      }
    }
    return rows;
  }

  static void updateOne(PreparedStatement ps, Row r) throws SQLException {
    if (ps.executeUpdate() != 1) {
      throw new IllegalStateException("row " + r.id() + " was not in the expected status");
    }
  }

  static void audit(PreparedStatement ps, Dialect dialect, Row r, Status from, Status to,
      Reason reason, long now) throws SQLException {
    dialect.setId(ps, 1, r.id());
    ps.setString(2, r.key());
    ps.setString(3, from.wireName());
    ps.setString(4, to.wireName());
    ps.setString(5, reason.wireName());
    ps.setLong(6, now);
    ps.executeUpdate();
  }
}
