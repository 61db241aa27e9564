package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.internal.IdempotencyRecords;
import dev.outboxreplay.testkit.Counters;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The receiver's idempotency records honour the durability mode: in {@link
 * Durability#POWER_LOSS_SAFE} every write of a record forces the disk before the receiver goes
 * on, one check per write so a path that forgets it fails by name.
 */
class ServerDurabilityTest {
  @TempDir Path dir;

  @Test
  void everyIdempotencyRecordWriteSyncsInPowerLossSafeMode() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("server"))
        .durability(Durability.POWER_LOSS_SAFE).build()) {
      db.migrate(IdempotencyRecords.COMPONENT, IdempotencyRecords.MIGRATIONS);
      IdempotencyRecords records = new IdempotencyRecords(db);
      Instant now = Instant.parse("2026-12-01T00:00:00Z");
      byte[] hash = new byte[32];
      syncs(db, "start", () -> records.start("t", "k1", "note.put", hash, now,
          now.plusSeconds(3600)));
      syncs(db, "fail", () -> {
        records.fail("t", "k1", "handler failed", now);
        return null;
      });
      syncs(db, "start after a failure", () -> records.start("t", "k1", "note.put", hash, now,
          now.plusSeconds(3600)));
      syncs(db, "clearStarted", records::clearStarted);
      records.start("t", "k2", "note.put", hash, now, now.plusSeconds(1));
      records.fail("t", "k2", "handler failed", now);
      syncs(db, "pruneExpired", () -> records.pruneExpired(now.plusSeconds(60), 100));
      assertThat(records.count()).isZero();
    }
  }

  @Test
  void aRequestTheReceiverAppliedWasForcedToDiskBeforeItsAnswer() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("server"))
        .durability(Durability.POWER_LOSS_SAFE).build()) {
      NotesApplication notes = new NotesApplication(db);
      try (IdempotentServer server = IdempotentServer.builder().database(db)
          .handler(NotesApplication.OPERATION, notes.handler()).start()) {
        long before = db.diskSyncs();
        HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(server.baseUrl() + "/" + NotesApplication.OPERATION))
            .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString("key-1"))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(
                "{\"entity\":\"e\",\"seq\":0,\"body\":\"b\"}")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isBetween(200, 299);
        assertThat(db.diskSyncs() - before).as("the key reserved, then the effect and the "
            + "stored answer committed: two forced writes").isGreaterThanOrEqualTo(2);
      }
    }
  }

  /** Runs {@code write} and checks that it forced the disk at least once. */
  private static <R> R syncs(H2Database db, String what, Callable<R> write) throws Exception {
    return Counters.raises(db::diskSyncs, what + " syncs in POWER_LOSS_SAFE mode", write);
  }
}
