package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard as a servlet filter in a real servlet container (Jetty's ee10 servlet context, under
 * context path {@code /app}, the filter registered for {@code /sync/*}), beside the
 * application's own servlets: it answers its operations and reconciliation with the protocol's
 * promises and passes every other request to them.
 */
class IdempotencyFilterTest {
  private static final String NOTE = "{\"entity\":\"e\",\"seq\":1}";
  @TempDir Path dir;
  private final HttpClient client = HttpClient.newHttpClient();
  private H2Database db;
  private NotesApplication notes;
  private Server server;
  private String base;

  /** The application's own servlet: answers "app:" and the path it was given. */
  private static final class AppServlet extends HttpServlet {
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      response.setStatus(200);
      response.getOutputStream().write(("app:" + request.getRequestURI())
          .getBytes(StandardCharsets.UTF_8));
    }
  }

  @BeforeEach
  void start() throws Exception {
    db = H2Database.open(dir.resolve("app"));
    notes = new NotesApplication(db);
    IdempotencyHandler guard = IdempotencyHandler.builder()
        .records(JdbcIdempotencyRecords.onH2(db, "app-1", Duration.ofSeconds(30)))
        .handler(NotesApplication.OPERATION, notes.handler())
        .maxBodyBytes(1024)
        .build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(InetAddress.getLoopbackAddress().getHostAddress());
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/app");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, "/sync")), "/sync/*",
        EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new AppServlet()), "/health");
    context.addServlet(new ServletHolder(new AppServlet()), "/sync/*");
    server.setHandler(context);
    server.start();
    base = "http://127.0.0.1:" + connector.getLocalPort() + "/app";
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
    db.close();
  }

  @Test
  void inAServletContainerItGuardsItsOperationsAndPassesTheRestToTheApplication()
      throws Exception {
    HttpResponse<String> first = post("/sync/note.put", "k1", NOTE);
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    assertThat(first.headers().firstValue(HttpContract.REPLAYED)).contains("false");
    assertThat(first.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("application/json"));
    HttpResponse<String> repeat = post("/sync/note.put", "k1", NOTE);
    assertThat(repeat.statusCode()).isEqualTo(201);
    assertThat(repeat.headers().firstValue(HttpContract.REPLAYED)).contains("true");
    assertThat(repeat.body()).isEqualTo(first.body());
    assertThat(post("/sync/note.put", "k1", "{\"entity\":\"e\",\"seq\":2}").statusCode())
        .as("the key with another payload").isEqualTo(422);
    assertThat(post("/sync/note.put", null, NOTE).statusCode()).as("no key").isEqualTo(400);

    HttpResponse<String> reconciled = client.send(HttpRequest.newBuilder(
            URI.create(base + "/sync" + HttpContract.RECONCILE_PATH))
        .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString("k1"))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(reconciled.statusCode()).isEqualTo(200);
    assertThat(new ObjectMapper().readTree(reconciled.body()).path("status").asText())
        .isEqualTo("committed");

    HttpResponse<String> other = post("/sync/other.op", "k2", NOTE);
    assertThat(other.statusCode()).isEqualTo(200);
    assertThat(other.body()).as("not the guard's operation: the application's servlet")
        .isEqualTo("app:/app/sync/other.op");
    HttpResponse<String> health = client.send(HttpRequest.newBuilder(URI.create(base
        + "/health")).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(health.body()).isEqualTo("app:/app/health");
    assertThat(notes.totalEffects()).as("one effect for k1, none for the rest").isEqualTo(1);
  }

  @Test
  void aBodyOverTheGuardsLimitIsAnswered413AndAppliesNothing() throws Exception {
    HttpResponse<String> tooLong = post("/sync/note.put", "k3",
        "{\"entity\":\"e\",\"seq\":3,\"body\":\"" + "x".repeat(2000) + "\"}");
    assertThat(tooLong.statusCode()).isEqualTo(413);
    assertThat(notes.totalEffects()).isZero();
    assertThat(post("/sync/note.put", "k3", NOTE).statusCode())
        .as("the key is still free for a body within the limit").isEqualTo(201);
  }

  @Test
  void aMountIsTheContextRootOrAPathWithoutTrailingSlash() {
    IdempotencyHandler guard = IdempotencyHandler.builder()
        .records(JdbcIdempotencyRecords.onH2(db, "app-2", Duration.ofSeconds(30)))
        .handler(NotesApplication.OPERATION, notes.handler()).build();
    assertThat(new IdempotencyFilter(guard, "")).isNotNull();
    for (String bad : new String[] {"sync", "/sync/", "/"}) {
      assertThatThrownBy(() -> new IdempotencyFilter(guard, bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mount");
    }
  }

  private HttpResponse<String> post(String path, String key, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key));
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
