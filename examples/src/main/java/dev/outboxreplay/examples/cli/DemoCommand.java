package dev.outboxreplay.examples.cli;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * End-to-end scenario of what the library does today: accepts inside the app's transaction,
 * idempotent re-accept, per-entity claims, a replayer whose lease expired being fenced off, and a
 * process restart. Exits 0 only when every check holds.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Run the offline-first scenario end to end and check its guarantees.")
final class DemoCommand implements Callable<Integer> {
  @Option(names = "--db", description = "Database file to use (default: a new temporary one).")
  Path db;

  private final PrintStream out = System.out;
  private final List<String> failures = new ArrayList<>();
  private Instant now = Instant.parse("2026-01-01T09:00:00Z");

  @Override
  public Integer call() throws Exception {
    long started = System.nanoTime();
    Path file = db != null ? db : Files.createTempDirectory("outbox-demo").resolve("app");
    out.println("outbox demo on " + file + ".mv.db");
    int accepted;
    List<CommandId> ids = new ArrayList<>();
    try (H2Database database = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(database);
      Outbox<Connection> outbox = Outbox.builder(store)
          .clock(Clock.fixed(now, ZoneOffset.UTC)).build();
      createNotes(database);

      step("offline: the user edits 3 notes; each edit and its outbox row commit together");
      for (int n = 1; n <= 3; n++) {
        ids.add(editNote(database, outbox, "note-" + n, "draft " + n, true).commandId());
      }
      editNote(database, outbox, "note-4", "abandoned edit", false);
      check(countNotes(database) == 3, "the rolled-back edit left no note");
      check(total(store) == 3, "the rolled-back edit left no outbox row");

      step("the app retries an accept after a crash: same id, same payload");
      OutboxRecord again = outbox.accept(OutboxCommand.of("note.put", "note-1",
          Map.of("id", "note-1", "body", "draft 1")).withCommandId(ids.get(0)));
      check(again.commandId().equals(ids.get(0)) && total(store) == 3,
          "re-accept returned the original command and wrote nothing");

      step("replayer A claims everything, then stalls past its lease; B takes over");
      List<OutboxRecord> heldByA = store.claim("replayer-A", Duration.ofSeconds(30), 10, now);
      now = now.plusSeconds(31);
      List<OutboxRecord> heldByB = store.claim("replayer-B", Duration.ofSeconds(30), 10, now);
      OutboxRecord zombie = heldByA.get(0);
      OutboxRecord successor = heldByB.stream()
          .filter(r -> r.commandId().equals(zombie.commandId())).findFirst().orElseThrow();
      check(heldByA.size() == 3 && heldByB.size() == 3
          && successor.fencingToken() > zombie.fencingToken(),
          "B took over all 3 expired leases; fencing token of " + zombie.entityKey() + " "
              + zombie.fencingToken() + " -> " + successor.fencingToken());
      try {
        store.complete(zombie.commandId(), zombie.fencingToken(), Status.CLAIMED,
            Outcome.acked(new StoredResponse(200, new byte[0])), now);
        check(false, "A's late ack must be refused");
      } catch (FencedOffException expected) {
        check(true, "A's late ack was refused: " + expected.getMessage());
      }
      store.markSending(successor.commandId(), successor.fencingToken(), now.plusSeconds(30), now);
      store.complete(successor.commandId(), successor.fencingToken(), Status.SENDING,
          Outcome.acked(new StoredResponse(200, "{\"ok\":true}".getBytes())), now);
      for (OutboxRecord r : heldByB) {
        if (!r.commandId().equals(successor.commandId())) {
          store.release(r.commandId(), r.fencingToken(), now, now);
        }
      }
      accepted = (int) total(store);
    }

    step("the process restarts");
    try (H2Database database = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(database);
      Map<Status, Long> counts = store.countByStatus();
      check(counts.get(Status.ACKED) == 1 && counts.get(Status.QUEUED) == 2,
          "after reopening: 1 acked, 2 still queued for the replayer");
      for (CommandId id : ids) {
        check(store.find(id).isPresent(), "command " + id + " survived the restart");
      }
      out.println();
      out.printf("%-17s %5s%n", "status", "rows");
      counts.forEach((status, n) -> out.printf("%-17s %5d%n", status.wireName(), n));
      out.printf("%naccepted %d, fenced-off writes refused 1, time %d ms%n", accepted,
          (System.nanoTime() - started) / 1_000_000);
    }
    if (!failures.isEmpty()) {
      out.println("FAILED: " + failures);
      return 1;
    }
    out.println("all checks passed");
    return 0;
  }

  private void step(String what) {
    out.println("- " + what);
  }

  private void check(boolean ok, String what) {
    out.println((ok ? "    ok   " : "    FAIL ") + what);
    if (!ok) {
      failures.add(what);
    }
  }

  private static void createNotes(H2Database database) throws SQLException {
    try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS note (id VARCHAR PRIMARY KEY, body VARCHAR)");
    }
  }

  private static OutboxRecord editNote(H2Database database, Outbox<Connection> outbox, String id,
      String body, boolean commit) throws SQLException {
    try (Connection c = database.dataSource().getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("MERGE INTO note KEY (id) VALUES (?, ?)")) {
        ps.setString(1, id);
        ps.setString(2, body);
        ps.executeUpdate();
      }
      OutboxRecord record = outbox.accept(c,
          OutboxCommand.of("note.put", id, Map.of("id", id, "body", body)));
      if (commit) {
        c.commit();
      } else {
        c.rollback();
      }
      return record;
    }
  }

  private static long countNotes(H2Database database) throws SQLException {
    try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT COUNT(*) FROM note")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long total(H2OutboxStore store) {
    return store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
  }
}
