package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.testkit.ManualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request whose node stopped before committing, and did not come back under its name: until
 * its lease ends a reconciliation says it is still processing; after, it says failed
 * (abandoned), so that the client resends with the same key instead of asking forever, and the
 * resend is processed once.
 */
class AbandonedRequestTest {
  private static final String BODY = "{\"entity\":\"e\",\"seq\":1}";
  @TempDir Path dir;
  private final HttpClient client = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void anAbandonedRequestReconcilesAsFailedOnceItsLeaseEndedAndItsResendRunsOnce()
      throws Exception {
    ManualClock clock = ManualClock.startingAtEpoch2026();
    try (H2Database db = H2Database.open(dir.resolve("server"))) {
      NotesApplication notes = new NotesApplication(db);
      JdbcIdempotencyRecords.onH2(db, "node-gone", Duration.ofSeconds(30)).claim(
          HttpContract.DEFAULT_TENANT, "k", NotesApplication.OPERATION,
          MessageDigest.getInstance("SHA-256").digest(BODY.getBytes(StandardCharsets.UTF_8)),
          clock.instant(), clock.instant().plus(Duration.ofDays(7)));
      try (IdempotentServer server = IdempotentServer.builder().database(db).node("node-here")
          .clock(clock).handler(NotesApplication.OPERATION, notes.handler()).start()) {
        clock.advance(Duration.ofSeconds(29));
        assertThat(reconcile(server).path("status").asText()).isEqualTo("processing");
        clock.advance(Duration.ofSeconds(1));
        JsonNode abandoned = reconcile(server);
        assertThat(abandoned.path("status").asText()).isEqualTo("failed");
        assertThat(abandoned.path("error").asText()).startsWith("abandoned");

        HttpResponse<String> resend = client.send(HttpRequest.newBuilder(
                URI.create(server.baseUrl() + "/" + NotesApplication.OPERATION))
            .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString("k"))
            .POST(HttpRequest.BodyPublishers.ofString(BODY)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(resend.statusCode()).as(resend.body()).isEqualTo(201);
        assertThat(resend.headers().firstValue(HttpContract.REPLAYED)).contains("false");
        assertThat(reconcile(server).path("status").asText()).isEqualTo("committed");
        assertThat(notes.totalEffects()).isEqualTo(1);
      }
    }
  }

  private JsonNode reconcile(IdempotentServer server) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(
            URI.create(server.baseUrl() + HttpContract.RECONCILE_PATH))
        .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString("k"))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return json.readTree(r.body());
  }
}
