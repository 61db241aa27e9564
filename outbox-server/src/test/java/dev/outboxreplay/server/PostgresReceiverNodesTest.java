package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.testkit.LoopbackPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two receiver nodes on one PostgreSQL database, over real HTTP on loopback: first requests
 * with one key spread over both take effect once, and a node that restarts while the other
 * processes a request leaves that request alone (the old "forget every started request at
 * start" would have run it a second time).
 */
class PostgresReceiverNodesTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static LoopbackPostgres postgres;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private final List<AutoCloseable> open = new ArrayList<>();
  private String database;
  private volatile String holdBody = "";
  private final CountDownLatch held = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = LoopbackPostgres.shared();
  }

  @BeforeEach
  void newDatabase() throws Exception {
    database = postgres.newDatabase();
    try (HikariDataSource setup = postgres.pool(database, 1);
        Connection c = setup.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE note_effect (arrival BIGSERIAL PRIMARY KEY, "
          + "idempotency_key VARCHAR(255) NOT NULL, body TEXT NOT NULL)");
    }
  }

  @AfterEach
  void closeNodes() throws Exception {
    release.countDown();
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private IdempotentServer node(String name) throws Exception {
    HikariDataSource pool = postgres.pool(database, 20);
    open.add(pool);
    IdempotentServer server = IdempotentServer.builder()
        .records(JdbcIdempotencyRecords.onPostgres(pool, name, Duration.ofSeconds(30)))
        .threads(32)
        .handler("note.put", (Connection tx, ServerRequest request) -> {
          String body = new String(request.body(), java.nio.charset.StandardCharsets.UTF_8);
          try (PreparedStatement ps = tx.prepareStatement(
              "INSERT INTO note_effect (idempotency_key, body) VALUES (?, ?)")) {
            ps.setString(1, request.idempotencyKey());
            ps.setString(2, body);
            ps.executeUpdate();
          }
          if (body.equals(holdBody)) {
            held.countDown();
            assertThat(release.await(2, TimeUnit.MINUTES)).isTrue();
          }
          return HandlerResponse.json(201, "{\"applied\":\"" + name + "\"}");
        })
        .start();
    open.add(server);
    return server;
  }

  private CompletableFuture<HttpResponse<String>> send(IdempotentServer node, String key,
      String body) {
    return client.sendAsync(HttpRequest.newBuilder(URI.create(node.baseUrl() + "/note.put"))
            .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key))
            .timeout(WAIT)
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private long effects(String key) throws SQLException {
    try (HikariDataSource read = postgres.pool(database, 1);
        Connection c = read.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*) FROM note_effect WHERE idempotency_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Test
  void twoHundredConcurrentFirstRequestsWithOneKeyOverTwoNodesTakeEffectOnce()
      throws Exception {
    IdempotentServer one = node("node-1");
    IdempotentServer two = node("node-2");
    holdBody = "{\"body\":\"once\"}"; // the one that wins runs until every other answered
    List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      answers.add(send(i % 2 == 0 ? one : two, "the-key", holdBody));
    }
    assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    Awaitility.await("the other 199 answered 409 in progress").atMost(WAIT)
        .pollInterval(Duration.ofMillis(10)).until(() -> answers.stream()
            .filter(f -> f.isDone() && f.join().statusCode() == 409).count() == 199);
    for (CompletableFuture<HttpResponse<String>> f : answers) {
      if (f.isDone()) {
        assertThat(f.join().body()).contains("request-in-progress");
      }
    }
    CompletableFuture<HttpResponse<String>> winner = null;
    for (CompletableFuture<HttpResponse<String>> f : answers) {
      if (!f.isDone()) {
        assertThat(winner).as("one request still running").isNull();
        winner = f;
      }
    }
    assertThat(winner).isNotNull();
    release.countDown();
    HttpResponse<String> first = winner.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue(HttpContract.REPLAYED)).contains("false");
    assertThat(effects("the-key")).isEqualTo(1);
    HttpResponse<String> repeat = send(one, "the-key", holdBody).get(WAIT.toSeconds(),
        TimeUnit.SECONDS);
    assertThat(repeat.headers().firstValue(HttpContract.REPLAYED)).contains("true");
    assertThat(repeat.body()).isEqualTo(first.body());
    HttpResponse<String> otherPayload = send(two, "the-key", "{\"body\":\"other\"}")
        .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(otherPayload.statusCode()).isEqualTo(422);
    assertThat(effects("the-key")).isEqualTo(1);
  }

  @Test
  void aNodeRestartedWhileTheOtherProcessesARequestDoesNotRunItAgain() throws Exception {
    IdempotentServer one = node("node-1");
    IdempotentServer two = node("node-2");
    holdBody = "{\"body\":\"slow\"}";
    CompletableFuture<HttpResponse<String>> slow = send(two, "k", holdBody);
    assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("node-2 is processing k")
        .isTrue();

    one.close();
    IdempotentServer restarted = node("node-1");
    HttpResponse<String> during = send(restarted, "k", holdBody).get(WAIT.toSeconds(),
        TimeUnit.SECONDS);
    assertThat(during.statusCode()).as("a retry while node-2 still runs it: %s", during.body())
        .isEqualTo(409);
    assertThat(during.body()).contains("request-in-progress");

    release.countDown();
    assertThat(slow.get(WAIT.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    HttpResponse<String> after = send(restarted, "k", holdBody).get(WAIT.toSeconds(),
        TimeUnit.SECONDS);
    assertThat(after.statusCode()).isEqualTo(201);
    assertThat(after.headers().firstValue(HttpContract.REPLAYED)).contains("true");
    assertThat(after.body()).isEqualTo("{\"applied\":\"node-2\"}");
    assertThat(effects("k")).isEqualTo(1);
  }
}
