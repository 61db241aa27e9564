package dev.outboxreplay.h2;

import dev.outboxreplay.jdbc.Durability;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxEntry;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.testkit.Counters;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every commit path of the stores honours the durability mode: in {@link
 * Durability#POWER_LOSS_SAFE} each write forces the disk ({@code CHECKPOINT SYNC}) before it
 * returns; in the default mode none does. One check per write method, so a path that forgets the
 * sync fails here by name.
 */
class DurabilityTest {
  @TempDir Path dir;

  @Test
  void everyOutboxStoreWriteSyncsInPowerLossSafeMode() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("app"))
        .durability(Durability.POWER_LOSS_SAFE).build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      Instant now = Instant.now().plusSeconds(5); // after the accepts below: they are due
      OutboxRecord a = syncs(db, "accept",
          () -> outbox.accept(OutboxCommand.of("op", "a", Map.of("n", 1))));
      syncs(db, "acceptAll", () -> outbox.acceptAll(List.of(
          OutboxCommand.of("op", "b", Map.of("n", 2)),
          OutboxCommand.of("op", "c", Map.of("n", 3)))));
      List<OutboxRecord> claimed = syncs(db, "claim",
          () -> store.claim("r", Duration.ofMinutes(1), 3, now));
      OutboxRecord first = claimed.stream().filter(r -> r.commandId().equals(a.commandId()))
          .findFirst().orElseThrow();
      OutboxRecord sending = syncs(db, "markSending", () -> store.markSending(first.commandId(),
          first.fencingToken(), now.plusSeconds(60), now));
      syncs(db, "complete", () -> store.complete(sending.commandId(), sending.fencingToken(),
          Status.SENDING, Outcome.acked(new StoredResponse(200, new byte[0])), now));
      OutboxRecord second = claimed.stream().filter(r -> !r.commandId().equals(a.commandId()))
          .findFirst().orElseThrow();
      syncs(db, "release", () -> store.release(second.commandId(), second.fencingToken(), now,
          now));
      syncs(db, "recoverExpiredLeases", () -> store.recoverExpiredLeases(now.plusSeconds(120)));
      OutboxRecord third = store.claim("r", Duration.ofMinutes(1), 1, now.plusSeconds(200))
          .get(0);
      store.complete(third.commandId(), third.fencingToken(), Status.CLAIMED,
          Outcome.rejected(new ErrorInfo("400", "bad", now), null), now.plusSeconds(200));
      syncs(db, "requeue", () -> store.requeue(third.commandId(), now.plusSeconds(300)));
      syncs(db, "inTransaction", () -> store.inTransaction(tx -> 1));
      syncs(db, "pruneAudit", () -> store.pruneAudit(now.plus(Duration.ofDays(365))));
    }
  }

  @Test
  void everyInboxStoreWriteSyncsInPowerLossSafeMode() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("inbox"))
        .durability(Durability.POWER_LOSS_SAFE).build()) {
      H2InboxStore store = H2InboxStore.create(db);
      Inbox<Connection> inbox = Inbox.builder(store, (tx, m) -> m.bytes(), (s, id, r) -> { })
          .build();
      Instant now = Instant.now();
      syncs(db, "receive (consume, mark projected)",
          () -> inbox.receive("s", "m1", new byte[] {1}));
      syncs(db, "consumeOnce", () -> store.consumeOnce(new InboxMessage("s", "m2", new byte[] {2}),
          now, tx -> new byte[] {2}));
      syncs(db, "markProjected", () -> {
        store.markProjected("s", "m2", now);
        return null;
      });
      syncs(db, "consumeOnce without a staged result", () -> store.consumeOnce(
          new InboxMessage("s", "m3", new byte[] {3}), now, tx -> null));
      syncs(db, "markIntegrityFailure", () -> store.markIntegrityFailure("s", "m3", now));
      syncs(db, "recordMismatch", () -> {
        store.recordMismatch("s", "m1", now);
        return null;
      });
      syncs(db, "pruneTombstones", () -> store.pruneTombstones(now.plusSeconds(1)));
      assertThat(store.find("s", "m1")).as("pruned").isEmpty();
      assertThat(store.list(InboxEntry.State.INTEGRITY_FAILURE, 10)).hasSize(1);
    }
  }

  @Test
  void theDefaultModeNeverSyncs() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("default"))) {
      Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
      Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(db), (tx, m) -> m.bytes(),
          (s, id, r) -> { }).build();
      outbox.accept(OutboxCommand.of("op", "a", Map.of("n", 1)));
      inbox.receive("s", "m1", new byte[] {1});
      inbox.store().pruneTombstones(Instant.now().plusSeconds(1));
      assertThat(db.diskSyncs()).isZero();
    }
  }

  /** Runs {@code write} and checks that it forced the disk at least once. */
  private static <R> R syncs(H2Database db, String what, Callable<R> write) throws Exception {
    return Counters.raises(db::diskSyncs, what + " syncs in POWER_LOSS_SAFE mode", write);
  }
}
