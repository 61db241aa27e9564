package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client side of reconciliation against the real reference server on loopback. */
class ReconciliationClientTest {
  @TempDir Path dir;
  H2Database db;
  IdempotentServer server;
  AtomicReference<FaultPlan> faults = new AtomicReference<>(FaultPlan.NONE);
  OkHttpClient http = OkHttpClients.create(Duration.ofSeconds(10));
  ReconciliationClient reconciliation;

  @BeforeEach
  void start() throws Exception {
    db = H2Database.open(dir.resolve("server"));
    NotesApplication notes = new NotesApplication(db);
    server = IdempotentServer.builder().database(db)
        .handler(NotesApplication.OPERATION, notes.handler())
        .handler("broken", (tx, request) -> {
          throw new IllegalStateException("boom");
        })
        .faults(request -> faults.get().onRequest(request)).start();
    reconciliation = new ReconciliationClient(http, HttpUrl.get(server.baseUrl()));
  }

  @AfterEach
  void stop() {
    server.close();
    db.close();
  }

  private int post(String operation, String key, String tenant) throws IOException {
    Request.Builder request = new Request.Builder().url(server.baseUrl() + "/" + operation)
        .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key))
        .post(RequestBody.create("{\"entity\":\"n\",\"seq\":1}",
            MediaType.get("application/json")));
    if (tenant != null) {
      request.header(HttpContract.TENANT, tenant);
    }
    try (Response response = http.newCall(request.build()).execute()) {
      return response.code();
    }
  }

  @Test
  void reportsNotSeenCommittedWithTheStoredAnswerAndFailed() throws Exception {
    IdempotencyKey key = new IdempotencyKey("note.put:n:\"quoted\"");
    assertThat(reconciliation.reconcile(key, null)).isEqualTo(Reconciliation.notSeen());
    assertThat(post("note.put", key.value(), null)).isEqualTo(201);
    Reconciliation committed = reconciliation.reconcile(key, null);
    assertThat(committed.state()).isEqualTo(Reconciliation.State.COMMITTED);
    assertThat(committed.response().status()).isEqualTo(201);
    assertThat(new String(committed.response().body(), StandardCharsets.UTF_8))
        .contains("\"applied\":true");
    assertThat(reconciliation.reconcile(key, "another-tenant").state())
        .isEqualTo(Reconciliation.State.NOT_SEEN);

    assertThat(post("broken", "k-broken", null)).isEqualTo(500);
    Reconciliation failed = reconciliation.reconcile(new IdempotencyKey("k-broken"), null);
    assertThat(failed.state()).isEqualTo(Reconciliation.State.FAILED);
    assertThat(failed.error()).isEqualTo("handler_failed:IllegalStateException");
  }

  @Test
  void responseLostAfterCommitIsFoundCommittedByReconciliation() throws Exception {
    faults.set(request -> FaultPlan.Fault.dropResponseAfterCommit());
    assertThatThrownBy(() -> post("note.put", "k-lost", null)).isInstanceOf(IOException.class);
    faults.set(FaultPlan.NONE);
    Reconciliation found = reconciliation.reconcile(new IdempotencyKey("k-lost"), null);
    assertThat(found.state()).isEqualTo(Reconciliation.State.COMMITTED);
    assertThat(found.response().status()).isEqualTo(201);
  }

  @Test
  void anUnreachableOrWrongEndpointIsAnIOException() throws Exception {
    server.close();
    assertThatThrownBy(() -> reconciliation.reconcile(new IdempotencyKey("k"), null))
        .isInstanceOf(IOException.class);
    assertThatThrownBy(() -> ReconciliationClient.parse("{\"status\":\"maybe\"}"))
        .isInstanceOf(IOException.class).hasMessageContaining("not a reconciliation document");
  }
}
