package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.jdbc.Durability;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.receiver.Claim;
import dev.outboxreplay.receiver.StoredAnswer;
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
      JdbcIdempotencyRecords records = JdbcIdempotencyRecords.onH2(db, "local",
          Duration.ofSeconds(30));
      Instant now = Instant.parse("2026-12-01T00:00:00Z");
      byte[] hash = new byte[32];
      Claim.Owned first = (Claim.Owned) syncs(db, "claim", () -> records.claim("t", "k1",
          "note.put", hash, now, now.plusSeconds(3600)));
      syncs(db, "fail", () -> {
        records.fail(first, "handler failed", now);
        return null;
      });
      Claim.Owned again = (Claim.Owned) syncs(db, "claim after a failure", () -> records.claim(
          "t", "k1", "note.put", hash, now, now.plusSeconds(3600)));
      syncs(db, "complete", () -> records.complete(again,
          tx -> new StoredAnswer(201, "application/json", new byte[] {'{', '}'}), now));
      records.claim("t", "k2", "note.put", hash, now, now.plusSeconds(1));
      syncs(db, "releaseOwnStarted", () -> records.releaseOwnStarted(now));
      Claim.Owned k2 = (Claim.Owned) records.claim("t", "k2", "note.put", hash, now,
          now.plusSeconds(1));
      records.fail(k2, "handler failed", now);
      syncs(db, "pruneExpired", () -> records.pruneExpired(now.plusSeconds(7200), 100));
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
