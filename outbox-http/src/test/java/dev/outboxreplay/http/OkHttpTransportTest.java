package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.TransportResult.Kind;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.testkit.ManualClock;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OkHttpTransportTest {
  @TempDir Path dir;
  MockWebServer server = new MockWebServer();
  ManualClock clock = ManualClock.startingAtEpoch2026();
  H2Database db;
  OutboxRecord command;
  SessionRuntime.Snapshot session = new SessionRuntime.Snapshot("acme", 3, false, "tok");

  @BeforeEach
  void start() throws Exception {
    server.start();
    db = H2Database.open(dir.resolve("client"));
    Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
    command = outbox.accept(OutboxCommand.of("note.put", "n-1", Map.of("b", 1, "a", "x")));
  }

  @AfterEach
  void stop() {
    server.close();
    db.close();
  }

  private OkHttpTransport transport() {
    return OkHttpTransport.builder(server.url("/api")).clock(clock)
        .callTimeout(Duration.ofSeconds(10)).build();
  }

  @Test
  void sendsTheStoredBytesWithTheHeaderContract() throws Exception {
    server.enqueue(new MockResponse.Builder().code(201).body("{\"ok\":true}").build());
    TransportResult result = transport().send(command, session);
    assertThat(result.kind()).isEqualTo(Kind.ACKED);
    assertThat(result.response().status()).isEqualTo(201);
    RecordedRequest request = server.takeRequest();
    assertThat(request.getUrl().encodedPath()).isEqualTo("/api/note.put");
    assertThat(request.getMethod()).isEqualTo("POST");
    assertThat(request.getBody().utf8()).isEqualTo("{\"a\":\"x\",\"b\":1}");
    assertThat(request.getHeaders().get(HttpContract.IDEMPOTENCY_KEY))
        .isEqualTo("\"" + command.idempotencyKey() + "\"");
    assertThat(request.getHeaders().get(HttpContract.CONTENT_DIGEST))
        .isEqualTo(HttpContract.contentDigest(command.payload().bytes()));
    assertThat(request.getHeaders().get(HttpContract.COMMAND_ID))
        .isEqualTo(command.commandId().toString());
    assertThat(request.getHeaders().get(HttpContract.SESSION_VERSION)).isEqualTo("3");
    assertThat(request.getHeaders().get(HttpContract.TENANT)).isEqualTo("acme");
    assertThat(request.getHeaders().get("Authorization")).isEqualTo("Bearer tok");
  }

  @Test
  void aConnectionCutAfterTheServerReadTheRequestIsUnknownWithExactlyOneRequest() {
    server.enqueue(new MockResponse.Builder()
        .onResponseStart(new SocketEffect.CloseSocket(true, false, false)).build());
    server.enqueue(new MockResponse.Builder().code(201).build());
    TransportResult result = transport().send(command, session);
    assertThat(result.kind()).isEqualTo(Kind.UNKNOWN);
    assertThat(result.errorCode()).isIn("no_response", "timeout_after_send");
    assertThat(server.getRequestCount()).as("OkHttp must not resend on its own").isEqualTo(1);
  }

  @Test
  void followUpsOkHttpWouldSendOnItsOwnAreNotSent() {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build());
    server.enqueue(new MockResponse.Builder().code(408).build());
    server.enqueue(new MockResponse.Builder().code(201).build());
    OkHttpTransport transport = transport();
    TransportResult busy = transport.send(command, session);
    assertThat(busy.kind()).isEqualTo(Kind.RETRYABLE);
    assertThat(busy.retryAfter()).isEqualTo(Duration.ZERO);
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(transport.send(command, session).kind()).isEqualTo(Kind.RETRYABLE);
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void aRefusedConnectionIsKnownNotSent() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    OkHttpTransport transport = OkHttpTransport.builder(
        HttpUrl.get("http://127.0.0.1:" + closedPort)).build();
    TransportResult result = transport.send(command, session);
    assertThat(result.kind()).isEqualTo(Kind.NOT_SENT);
    assertThat(result.errorCode()).isEqualTo("connect_failed");
  }

  @Test
  void aStoredOperationThatIsNotOnePathSegmentIsNeverPostedElsewhere() throws Exception {
    // written by an older release, before accept checked the grammar
    for (String operation : List.of("..", ".", "a/b")) {
      OutboxRecord row = H2OutboxStore.create(db).insert(List.of(new dev.outboxreplay
          .PreparedCommand(dev.outboxreplay.CommandId.parse(
              "01890a5d-ac96-774b-bcce-b30209" + String.format("%06d", operation.length())),
              new dev.outboxreplay.IdempotencyKey("k-" + operation.length()), operation, "e",
              dev.outboxreplay.Payload.ofCanonicalBytes("{}".getBytes(StandardCharsets.UTF_8)),
              0, java.time.Instant.now()))).get(0);
      TransportResult result = transport().send(row, session);
      assertThat(result.kind()).as(operation).isEqualTo(Kind.REJECTED);
      assertThat(result.errorCode()).isEqualTo("invalid_operation");
    }
    assertThat(server.getRequestCount()).as("nothing reached any path").isZero();
  }

  @Test
  void aSessionSnapshotNeverPrintsItsCredentials() {
    assertThat(session.toString()).doesNotContain("tok").contains("acme").contains("redacted");
  }

  @Test
  void anUnknownHostIsKnownNotSent() {
    okhttp3.OkHttpClient noDns = new okhttp3.OkHttpClient.Builder().dns(host -> {
      throw new java.net.UnknownHostException(host);
    }).build();
    OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get("http://receiver.test"))
        .client(noDns).build();
    TransportResult result = transport.send(command, session);
    assertThat(result.kind()).isEqualTo(Kind.NOT_SENT);
    assertThat(result.message()).contains("UnknownHostException");
  }

  @Test
  void aReceiverWithoutReconciliationIsRememberedAndNotAskedAgain() throws Exception {
    server.enqueue(new MockResponse.Builder().code(404).body("no such route").build());
    OkHttpTransport transport = transport();
    assertThat(transport.reconciliationAvailable()).isTrue();
    assertThat(transport.reconcile(command, session)).isEmpty();
    assertThat(transport.reconciliationAvailable()).isFalse();
    assertThat(transport.reconcile(command, session)).isEmpty();
    assertThat(server.getRequestCount()).as("asked once").isEqualTo(1);
  }

  @Test
  void aReconciliationAnswerThatIsNotTheDocumentedShapeMeansNoReconciliation() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).body("<html>hello</html>").build());
    OkHttpTransport transport = transport();
    assertThat(transport.reconcile(command, session)).isEmpty();
    assertThat(transport.reconciliationAvailable()).isFalse();
  }

  @Test
  void aReconciliationThatFailsWithA503IsAnErrorNotAVerdict() {
    server.enqueue(new MockResponse.Builder().code(503).build());
    OkHttpTransport transport = transport();
    assertThatThrownBy(() -> transport.reconcile(command, session))
        .isInstanceOf(java.io.IOException.class);
    assertThat(transport.reconciliationAvailable()).isTrue();
  }

  @Test
  void statusCodesAreClassifiedByTheDocumentedTable() {
    byte[] none = new byte[0];
    byte[] inProgress = "{\"type\":\"urn:outbox:problem:request-in-progress\"}"
        .getBytes(StandardCharsets.UTF_8);
    assertThat(OkHttpTransport.defaultKind(200, none)).isEqualTo(Kind.ACKED);
    assertThat(OkHttpTransport.defaultKind(204, none)).isEqualTo(Kind.ACKED);
    for (int code : new int[] {408, 425, 429, 500, 502, 503, 504, 507}) {
      assertThat(OkHttpTransport.defaultKind(code, none)).as("%d", code).isEqualTo(Kind.RETRYABLE);
    }
    assertThat(OkHttpTransport.defaultKind(409, inProgress)).isEqualTo(Kind.IN_PROGRESS);
    assertThat(OkHttpTransport.defaultKind(409, none)).isEqualTo(Kind.CONFLICT);
    assertThat(OkHttpTransport.defaultKind(422, none)).isEqualTo(Kind.CONFLICT);
    assertThat(OkHttpTransport.defaultKind(401, none)).isEqualTo(Kind.UNAUTHORIZED);
    assertThat(OkHttpTransport.defaultKind(403, none)).isEqualTo(Kind.FORBIDDEN);
    for (int code : new int[] {400, 404, 410, 417, 301, 302}) {
      assertThat(OkHttpTransport.defaultKind(code, none)).as("%d", code).isEqualTo(Kind.REJECTED);
    }
  }

  @Test
  void classificationCanBeOverriddenPerStatusButA2xxIsNeverResent() {
    server.enqueue(new MockResponse.Builder().code(417).build());
    OkHttpTransport transport = OkHttpTransport.builder(server.url("/"))
        .classify(417, Kind.CONFLICT).build();
    assertThat(transport.send(command, session).kind()).isEqualTo(Kind.CONFLICT);
    assertThatThrownBy(() -> OkHttpTransport.builder(server.url("/")).classify(200, Kind.RETRYABLE))
        .hasMessageContaining("never turned into a resend");
    assertThatThrownBy(() -> OkHttpTransport.builder(server.url("/")).classify(500, Kind.ACKED))
        .hasMessageContaining("only a 2xx");
  }


  @Test
  void aRetryAfterTooLargeForAnIntIsALongWaitNotAnException() throws Exception {
    for (String header : List.of("2147483648", "99999999999", "0002147483648")) {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", header)
          .build());
      TransportResult result = transport().send(command, session);
      assertThat(result.kind()).as(header).isEqualTo(Kind.RETRYABLE);
      assertThat(result.retryAfter()).as(header)
          .isGreaterThanOrEqualTo(Duration.ofSeconds(Integer.MAX_VALUE));
    }
    assertThat(RetryAfterClamp.tooLargeForInt("2147483647")).isFalse();
    assertThat(RetryAfterClamp.tooLargeForInt("12a")).isFalse();
  }

  @Test
  void anAnswerLongerThanTheLimitIsReadOnlyUpToItAcked2xxLoseTheirAnswer() throws Exception {
    String big = "x".repeat(5_000);
    server.enqueue(new MockResponse.Builder().code(201).body(big).build());
    server.enqueue(new MockResponse.Builder().code(400).body(big).build());
    server.enqueue(new MockResponse.Builder().code(201).body("y".repeat(1_000)).build());
    OkHttpTransport transport = OkHttpTransport.builder(server.url("/api")).clock(clock)
        .maxResponseBytes(1_000).build();
    TransportResult acked = transport.send(command, session);
    assertThat(acked.kind()).isEqualTo(Kind.ACKED);
    assertThat(acked.response()).as("no answer to apply or store").isNull();
    assertThat(acked.errorCode()).isEqualTo("response_too_large");
    TransportResult rejected = transport.send(command, session);
    assertThat(rejected.kind()).isEqualTo(Kind.REJECTED);
    assertThat(rejected.response().body()).hasSize(1_000);
    assertThat(rejected.message()).endsWith("[cut at 1000 bytes]");
    TransportResult exactly = transport.send(command, session);
    assertThat(exactly.response().body()).as("at the limit: whole").hasSize(1_000);
  }

  @Test
  void aBareKeyHeaderCarriesTheKeyUnquotedOnSendsAndReconciliation() throws Exception {
    server.enqueue(new MockResponse.Builder().code(404).build());
    server.enqueue(new MockResponse.Builder().code(201).body("{}").build());
    OkHttpTransport transport = OkHttpTransport.builder(server.url("/api")).clock(clock)
        .keyHeaderFormat(KeyHeaderFormat.BARE).build();
    transport.reconcile(command, session);
    transport.send(command, session);
    for (int i = 0; i < 2; i++) {
      assertThat(server.takeRequest().getHeaders().get(HttpContract.IDEMPOTENCY_KEY))
          .isEqualTo(command.idempotencyKey().value());
    }
  }

  @Test
  void a423IsInProgressByDefault() {
    assertThat(OkHttpTransport.defaultKind(423, new byte[0])).isEqualTo(Kind.IN_PROGRESS);
  }
}
