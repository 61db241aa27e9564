package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.testkit.ManualClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdempotentServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  ManualClock clock = ManualClock.startingAtEpoch2026();
  H2Database db;
  NotesApplication notes;
  IdempotentServer server;
  AtomicReference<FaultPlan> faults = new AtomicReference<>(FaultPlan.NONE);
  AtomicInteger flakyCalls = new AtomicInteger();
  HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10)).build();

  @BeforeEach
  void start() throws Exception {
    db = H2Database.open(dir.resolve("server"));
    notes = new NotesApplication(db);
    server = IdempotentServer.builder().database(db).clock(clock)
        .handler(NotesApplication.OPERATION, notes.handler())
        .handler("flaky", (tx, request) -> {
          if (flakyCalls.incrementAndGet() == 1) {
            throw new IllegalStateException("downstream unavailable");
          }
          return notes.handler().handle(tx, request);
        })
        .retention(Duration.ofHours(1)).pruneInterval(Duration.ofMillis(50))
        .maxBodyBytes(4096)
        .faults(request -> faults.get().onRequest(request))
        .start();
  }

  @AfterEach
  void stop() {
    server.close();
    db.close();
  }

  private HttpResponse<String> post(String path, String keyHeader, String tenant, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (keyHeader != null) {
      request.header(HttpContract.IDEMPOTENCY_KEY, keyHeader);
    }
    if (tenant != null) {
      request.header(HttpContract.TENANT, tenant);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> put(String key, String body) throws Exception {
    return post("/note.put", HttpContract.toStructuredString(key), null, body);
  }

  private JsonNode reconcile(String key, String tenant) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(
        URI.create(server.baseUrl() + HttpContract.RECONCILE_PATH))
        .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key)).GET();
    if (tenant != null) {
      request.header(HttpContract.TENANT, tenant);
    }
    HttpResponse<String> response = client.send(request.build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private static String note(String entity, int seq) {
    return "{\"body\":\"hi\",\"entity\":\"" + entity + "\",\"seq\":" + seq + "}";
  }

  @Test
  void firstRequestIsProcessedAndARepeatGetsTheStoredResponse() throws Exception {
    HttpResponse<String> first = put("k1", note("n1", 1));
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue(HttpContract.REPLAYED)).contains("false");
    HttpResponse<String> repeat = put("k1", note("n1", 1));
    assertThat(repeat.statusCode()).isEqualTo(201);
    assertThat(repeat.body()).isEqualTo(first.body());
    assertThat(repeat.headers().firstValue(HttpContract.REPLAYED)).contains("true");
    assertThat(notes.effectCount("default", "k1")).isEqualTo(1);
  }

  @Test
  void sameKeyWithADifferentPayloadIs422AndChangesNothing() throws Exception {
    put("k1", note("n1", 1));
    HttpResponse<String> reuse = put("k1", note("n1", 2));
    assertThat(reuse.statusCode()).isEqualTo(422);
    assertThat(reuse.headers().firstValue("Content-Type")).contains("application/problem+json");
    assertThat(notes.totalEffects()).isEqualTo(1);
    assertThat(put("k1", note("n1", 1)).headers().firstValue(HttpContract.REPLAYED))
        .contains("true");
  }

  @Test
  void rejectedRequestsGetProblemDetailsAndStoreNothing() throws Exception {
    assertThat(post("/note.put", null, null, note("n", 1)).statusCode()).isEqualTo(400);
    HttpResponse<String> unquoted = post("/note.put", "k1", null, note("n", 1));
    assertThat(unquoted.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(unquoted.body()).path("detail").asText())
        .contains("malformed Idempotency-Key").contains("double quotes");
    assertThat(post("/note.put", "\"" + "k".repeat(256) + "\"", null, note("n", 1)).statusCode())
        .isEqualTo(400);
    assertThat(post("/note.put", "\"k1\"", "bad tenant", note("n", 1)).statusCode())
        .isEqualTo(400);
    assertThat(post("/nothing.here", "\"k1\"", null, note("n", 1)).statusCode()).isEqualTo(404);
    assertThat(post("/note.put", "\"k1\"", null, "x".repeat(5000)).statusCode()).isEqualTo(413);
    HttpResponse<String> digest = client.send(HttpRequest.newBuilder(
        URI.create(server.baseUrl() + "/note.put"))
        .header(HttpContract.IDEMPOTENCY_KEY, "\"k1\"")
        .header(HttpContract.CONTENT_DIGEST, HttpContract.contentDigest(new byte[] {1}))
        .POST(HttpRequest.BodyPublishers.ofString(note("n", 1))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(digest.statusCode()).isEqualTo(400);
    assertThat(digest.body()).contains("Content-Digest does not match");
    assertThat(server.recordCount()).isZero();
    assertThat(notes.totalEffects()).isZero();
  }

  @Test
  void sameKeyWhileTheFirstIsInProgressIs409AndReconciliationSaysProcessing() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    faults.set(request -> FaultPlan.Fault.beforeCommit(() -> {
      inside.countDown();
      await(release);
    }));
    CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
      try {
        return put("k1", note("n1", 1));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
    faults.set(FaultPlan.NONE);
    HttpResponse<String> second = put("k1", note("n1", 1));
    assertThat(second.statusCode()).isEqualTo(409);
    assertThat(second.body()).contains("request-in-progress");
    assertThat(reconcile("k1", null).path("status").asText()).isEqualTo("processing");
    release.countDown();
    assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    JsonNode committed = reconcile("k1", null);
    assertThat(committed.path("status").asText()).isEqualTo("committed");
    assertThat(committed.path("response").path("status").asInt()).isEqualTo(201);
    assertThat(new String(Base64.getDecoder().decode(
        committed.path("response").path("bodyBase64").asText()), StandardCharsets.UTF_8))
        .contains("\"applied\":true");
    assertThat(reconcile("never-sent", null).path("status").asText()).isEqualTo("not_seen");
    assertThat(notes.effectCount("default", "k1")).isEqualTo(1);
  }

  @Test
  void concurrentRequestsWithTheSameKeyApplyTheEffectExactlyOnce() throws Exception {
    for (int round = 0; round < 5; round++) {
      String key = "race-" + round;
      CountDownLatch go = new CountDownLatch(1);
      List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        responses.add(CompletableFuture.supplyAsync(() -> {
          try {
            go.await();
            return put(key, note("n", 1));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }));
      }
      go.countDown();
      int processed = 0;
      for (CompletableFuture<HttpResponse<String>> f : responses) {
        HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
        assertThat(r.statusCode()).isIn(201, 409);
        if (r.statusCode() == 201 && r.headers().firstValue(HttpContract.REPLAYED)
            .orElse("").equals("false")) {
          processed++;
        }
      }
      assertThat(processed).as("requests that ran the handler").isEqualTo(1);
      assertThat(notes.effectCount("default", key)).isEqualTo(1);
    }
  }

  @Test
  void keysAreScopedByTenant() throws Exception {
    assertThat(post("/note.put", "\"k1\"", "tenant-a", note("n", 1)).statusCode()).isEqualTo(201);
    HttpResponse<String> other = post("/note.put", "\"k1\"", "tenant-b", note("n", 2));
    assertThat(other.statusCode()).as("a different payload is fine in another tenant")
        .isEqualTo(201);
    assertThat(other.headers().firstValue(HttpContract.REPLAYED)).contains("false");
    assertThat(notes.effectCount("tenant-a", "k1")).isEqualTo(1);
    assertThat(notes.effectCount("tenant-b", "k1")).isEqualTo(1);
    assertThat(reconcile("k1", "tenant-c").path("status").asText()).isEqualTo("not_seen");
  }

  /**
   * With bearer tokens the tenant comes from the credentials: no or an unknown token is 401 with
   * no effect, a tenant header naming another tenant is 403, and reconciliation needs the token
   * too. Without a resolver the header is trusted, which docs/security.md says.
   */
  @Test
  void withBearerTokensTheTenantComesFromTheCredentialsNotTheHeader() throws Exception {
    try (IdempotentServer authed = IdempotentServer.builder().database(db).clock(clock)
        .handler(NotesApplication.OPERATION, notes.handler())
        .tenants(TenantResolver.bearerTokens(java.util.Map.of("token-a", "tenant-a"))).start()) {
      java.util.function.BiFunction<String, String, HttpResponse<String>> put = (token, tenant) -> {
        HttpRequest.Builder r = HttpRequest.newBuilder(
                URI.create(authed.baseUrl() + "/" + NotesApplication.OPERATION))
            .header(HttpContract.IDEMPOTENCY_KEY, "\"k-auth\"").timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(note("n", 1)));
        if (token != null) {
          r.header("Authorization", "Bearer " + token);
        }
        if (tenant != null) {
          r.header(HttpContract.TENANT, tenant);
        }
        try {
          return client.send(r.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      };
      assertThat(put.apply(null, "tenant-a").statusCode()).isEqualTo(401);
      assertThat(put.apply("token-b", null).statusCode()).isEqualTo(401);
      assertThat(put.apply("token-a", "tenant-b").statusCode()).isEqualTo(403);
      assertThat(notes.totalEffects()).as("refused requests take no effect").isZero();
      assertThat(put.apply("token-a", null).statusCode()).isEqualTo(201);
      assertThat(notes.effectCount("tenant-a", "k-auth")).isEqualTo(1);
      HttpResponse<String> repeat = put.apply("token-a", "tenant-a");
      assertThat(repeat.statusCode()).isEqualTo(201);
      assertThat(repeat.headers().firstValue(HttpContract.REPLAYED)).hasValue("true");
      assertThat(notes.totalEffects()).isEqualTo(1);
      HttpRequest.Builder lookup = HttpRequest.newBuilder(
              URI.create(authed.baseUrl() + HttpContract.RECONCILE_PATH))
          .header(HttpContract.IDEMPOTENCY_KEY, "\"k-auth\"").GET();
      assertThat(client.send(lookup.build(), HttpResponse.BodyHandlers.ofString()).statusCode())
          .isEqualTo(401);
      HttpResponse<String> found = client.send(lookup.header("Authorization", "Bearer token-a")
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(JSON.readTree(found.body()).path("status").asText()).isEqualTo("committed");
    }
  }

  /**
   * A handler that fails with a message quoting the request body (as a parser's error does): the
   * answer, the reconciliation answer and the server's log carry none of the body's bytes; neither
   * do the answers to a malformed key, an unknown operation or a wrong method that carry them.
   */
  @Test
  void theReceiverNeverEchoesRequestBytes() throws Exception {
    String marker = "SECRET-7f3a";
    java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
    java.io.PrintStream stderr = System.err;
    List<String> answers = new java.util.ArrayList<>();
    try (IdempotentServer echoing = IdempotentServer.builder().database(db).clock(clock)
        .handler("parse", (tx, request) -> {
          throw new IllegalArgumentException("cannot parse "
              + new String(request.body(), java.nio.charset.StandardCharsets.UTF_8));
        }).start()) {
      System.setErr(new java.io.PrintStream(log, true));
      HttpResponse<String> failed = client.send(HttpRequest.newBuilder(
              URI.create(echoing.baseUrl() + "/parse"))
          .header(HttpContract.IDEMPOTENCY_KEY, "\"k-echo\"").timeout(Duration.ofSeconds(30))
          .POST(HttpRequest.BodyPublishers.ofString("{\"card\":\"" + marker + "\"}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(failed.statusCode()).isEqualTo(500);
      answers.add(failed.body());
      HttpResponse<String> reconciled = client.send(HttpRequest.newBuilder(
              URI.create(echoing.baseUrl() + HttpContract.RECONCILE_PATH))
          .header(HttpContract.IDEMPOTENCY_KEY, "\"k-echo\"").GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(reconciled.body()).contains("handler_failed:IllegalArgumentException");
      answers.add(reconciled.body());
      HttpResponse<String> badKey = client.send(HttpRequest.newBuilder(
              URI.create(echoing.baseUrl() + "/parse"))
          .header(HttpContract.IDEMPOTENCY_KEY, marker).POST(
              HttpRequest.BodyPublishers.ofString("{}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(badKey.statusCode()).isEqualTo(400);
      answers.add(badKey.body());
      HttpResponse<String> unknown = client.send(HttpRequest.newBuilder(
              URI.create(echoing.baseUrl() + "/" + marker)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(unknown.statusCode()).isEqualTo(404);
      answers.add(unknown.body());
    } finally {
      System.setErr(stderr);
    }
    assertThat(log.toString(java.nio.charset.StandardCharsets.UTF_8))
        .as("the log names the failure").contains("IllegalArgumentException")
        .doesNotContain(marker);
    assertThat(answers).allSatisfy(answer -> assertThat(answer).doesNotContain(marker));
  }

  @Test
  void aFailedHandlerTakesNoEffectIsReportedFailedAndMayBeRetried() throws Exception {
    HttpResponse<String> failed = post("/flaky", "\"k1\"", null, note("n", 1));
    assertThat(failed.statusCode()).isEqualTo(500);
    JsonNode status = reconcile("k1", null);
    assertThat(status.path("status").asText()).isEqualTo("failed");
    assertThat(status.path("error").asText())
        .as("a stable code, never the exception's message")
        .isEqualTo("handler_failed:IllegalStateException");
    assertThat(notes.totalEffects()).isZero();
    HttpResponse<String> retried = post("/flaky", "\"k1\"", null, note("n", 1));
    assertThat(retried.statusCode()).isEqualTo(201);
    assertThat(notes.effectCount("default", "k1")).isEqualTo(1);
  }

  @Test
  void responseDroppedAfterCommitIsReplayedOnRetryWithoutASecondEffect() throws Exception {
    faults.set(request -> FaultPlan.Fault.dropResponseAfterCommit());
    assertThatThrownBy(() -> put("k1", note("n1", 1))).isInstanceOf(IOException.class);
    faults.set(FaultPlan.NONE);
    assertThat(reconcile("k1", null).path("status").asText()).isEqualTo("committed");
    HttpResponse<String> retry = put("k1", note("n1", 1));
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue(HttpContract.REPLAYED)).contains("true");
    assertThat(notes.effectCount("default", "k1")).isEqualTo(1);
  }

  @Test
  void injected503CarriesRetryAfterAndStoresNothing() throws Exception {
    faults.set(request -> FaultPlan.Fault.fail(503, Duration.ofSeconds(7)));
    HttpResponse<String> busy = put("k1", note("n1", 1));
    assertThat(busy.statusCode()).isEqualTo(503);
    assertThat(busy.headers().firstValue("Retry-After")).contains("7");
    assertThat(server.recordCount()).isZero();
    assertThat(notes.totalEffects()).isZero();
  }

  @Test
  void businessRefusalsAreStoredAndReplayedLikeAnyAnswer() throws Exception {
    String refused = "{\"entity\":\"n\",\"reject\":\"conflict\",\"seq\":1}";
    assertThat(put("k1", refused).statusCode()).isEqualTo(409);
    HttpResponse<String> again = put("k1", refused);
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(again.body()).contains("business_conflict").doesNotContain("in-progress");
    assertThat(again.headers().firstValue(HttpContract.REPLAYED)).contains("true");
  }

  @Test
  void expiredKeysArePrunedInTheBackgroundWhileRequestsGoOn() throws Exception {
    put("old", note("n", 1));
    clock.advance(Duration.ofMinutes(30));
    put("newer", note("n", 2));
    assertThat(server.recordCount()).isEqualTo(2);
    clock.advance(Duration.ofMinutes(31));
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
        .until(() -> server.recordCount() == 1);
    assertThat(reconcile("old", null).path("status").asText()).isEqualTo("not_seen");
    assertThat(reconcile("newer", null).path("status").asText()).isEqualTo("committed");
    assertThat(put("another", note("n", 3)).statusCode()).isEqualTo(201);
  }

  @Test
  void theServerListensOnLoopbackAndSetsNoJvmWideProperty() {
    assertThat(server.baseUrl()).startsWith("http://127.0.0.1:");
    assertThat(System.getProperties().stringPropertyNames())
        .noneMatch(name -> name.startsWith("sun.net.httpserver."));
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
