package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Months of use in minutes, for the file-size probes: each cycle accepts one note edit and takes
 * it through the store's own claim, mark-sending and complete (no HTTP), then moves the clock on
 * by {@code step}; with retention on, every simulated hour it prunes the audit older than 30 days,
 * makes commands that ended a day ago tombstones and deletes tombstones older than 8 days, as a
 * replayer does.
 */
final class AckCycles {
  private static final byte[] RESPONSE =
      "{\"applied\":true,\"version\":17}".getBytes(StandardCharsets.UTF_8);
  private final JdbcOutboxStore store;
  private final ManualClock clock;
  private final Duration step;
  private final boolean retention;
  private final Outbox<Connection> outbox;
  private Instant lastUpkeep;

  AckCycles(JdbcOutboxStore store, ManualClock clock, Duration step, boolean retention) {
    this.store = store;
    this.clock = clock;
    this.step = step;
    this.retention = retention;
    this.outbox = Outbox.builder(store).clock(clock).build();
    this.lastUpkeep = clock.instant();
  }

  /** Runs cycle {@code i}; returns the nanoseconds its accept took. */
  long run(int i) {
    long acceptStarted = System.nanoTime();
    outbox.accept(OutboxCommand.of("note.put", "note-" + (i % 500), Map.of("id",
        "note-" + (i % 500), "body", "a note of about a hundred bytes, edited offline, "
            + "version " + i)));
    long acceptNanos = System.nanoTime() - acceptStarted;
    Instant now = clock.instant();
    for (OutboxRecord r : store.claim("probe", Duration.ofMinutes(1), 8, now)) {
      OutboxRecord sending = store.markSending(r.commandId(), r.fencingToken(),
          now.plusSeconds(60), now);
      store.complete(sending.commandId(), sending.fencingToken(), Status.SENDING,
          Outcome.acked(new StoredResponse(201, RESPONSE)), now);
    }
    clock.advance(step);
    now = clock.instant();
    if (retention && Duration.between(lastUpkeep, now).toHours() >= 1) {
      lastUpkeep = now;
      store.pruneAudit(now.minus(Duration.ofDays(30)));
      store.tombstoneEnded(now.minus(Duration.ofDays(1)), now);
      store.deleteTombstones(now.minus(Duration.ofDays(8)));
    }
    return acceptNanos;
  }
}
