package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard dropped into an application's own Jetty server, beside the application's own
 * handlers: it answers its operations and reconciliation under the path it is mounted at, with
 * the protocol's promises, and leaves every other request to the application.
 */
class IdempotencyHandlerTest {
  private static final String NOTE = "{\"entity\":\"e\",\"seq\":1}";
  @TempDir Path dir;
  private final HttpClient client = HttpClient.newHttpClient();

  @Test
  void mountedInTheApplicationsOwnJettyItGuardsItsOperationsAndPassesTheRestOn()
      throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      NotesApplication notes = new NotesApplication(db);
      IdempotencyHandler guard = guard(db, notes);
      Server server = new Server();
      ServerConnector connector = new ServerConnector(server);
      connector.setHost(InetAddress.getLoopbackAddress().getHostAddress());
      connector.setPort(0);
      server.addConnector(connector);
      server.setHandler(new Handler.Sequence(new ContextHandler(guard, "/sync"),
          new Handler.Abstract() {                  // the application's own endpoint
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
              if (!Request.getPathInContext(request).equals("/health")) {
                return false;
              }
              response.setStatus(200);
              response.write(true, ByteBuffer.wrap("ok".getBytes(StandardCharsets.UTF_8)),
                  callback);
              return true;
            }
          }));
      server.start();
      try {
        String base = "http://127.0.0.1:" + connector.getLocalPort();
        HttpResponse<String> first = post(base + "/sync/note.put", "k1", NOTE);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(first.headers().firstValue(HttpContract.REPLAYED)).contains("false");
        HttpResponse<String> repeat = post(base + "/sync/note.put", "k1", NOTE);
        assertThat(repeat.headers().firstValue(HttpContract.REPLAYED)).contains("true");
        assertThat(repeat.body()).isEqualTo(first.body());
        assertThat(post(base + "/sync/note.put", "k1", "{\"entity\":\"e\",\"seq\":2}")
            .statusCode()).isEqualTo(422);
        assertThat(notes.totalEffects()).isEqualTo(1);

        HttpResponse<String> reconciled = client.send(HttpRequest.newBuilder(
                URI.create(base + "/sync" + HttpContract.RECONCILE_PATH))
            .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString("k1"))
            .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(new ObjectMapper().readTree(reconciled.body()).path("status").asText())
            .isEqualTo("committed");

        HttpResponse<String> health = client.send(HttpRequest.newBuilder(
            URI.create(base + "/health")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).as("the application's own handler").isEqualTo("ok");
        assertThat(post(base + "/sync/other.op", "k2", NOTE).statusCode())
            .as("not the guard's operation: left to the application (none: 404)")
            .isEqualTo(404);
        assertThat(post(base + "/sync/note.put", null, NOTE).statusCode())
            .as("no key").isEqualTo(400);
        assertThat(notes.totalEffects()).isEqualTo(1);
      } finally {
        server.stop();
      }
    }
  }

  @Test
  void respondSpeaksTheSameProtocolWithoutJetty() {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      NotesApplication notes = new NotesApplication(db);
      IdempotencyHandler guard = guard(db, notes);
      String key = HttpContract.toStructuredString("k1");
      byte[] body = NOTE.getBytes(StandardCharsets.UTF_8);
      IdempotencyHandler.Reply first = guard.respond("POST", "/note.put",
          name -> name.equalsIgnoreCase(HttpContract.IDEMPOTENCY_KEY) ? key : null, body);
      IdempotencyHandler.Reply again = guard.respond("POST", "/note.put",
          name -> name.equalsIgnoreCase(HttpContract.IDEMPOTENCY_KEY) ? key : null, body);
      assertThat(first.status()).isEqualTo(201);
      assertThat(again.headers()).containsEntry(HttpContract.REPLAYED, "true");
      assertThat(again.body()).isEqualTo(first.body());
      assertThat(guard.answers("/note.put")).isTrue();
      assertThat(guard.answers("/health")).isFalse();
      assertThat(guard.respond("POST", "/note.put", name -> null, body).status())
          .isEqualTo(400);
    }
  }

  private static IdempotencyHandler guard(H2Database db, NotesApplication notes) {
    return IdempotencyHandler.builder()
        .records(JdbcIdempotencyRecords.onH2(db, "app-1", Duration.ofSeconds(30)))
        .handler(NotesApplication.OPERATION, notes.handler())
        .build();
  }

  private HttpResponse<String> post(String url, String key, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key));
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
