package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Stalled clients (sending nothing, half a request line, a head and half a body) against the
 * reference receiver over real loopback sockets: they hold no request thread, each kind meets a
 * time limit, and the connection limit bounds them.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("SlowClientsTest") // its own methods one after another
class SlowClientsTest {
  private static final String BODY = "{\"body\":\"hi\",\"entity\":\"n\",\"seq\":1}";
  private static final Duration GENEROUS = Duration.ofMinutes(5);

  @TempDir Path dir;
  H2Database db;
  IdempotentServer server;
  final List<Socket> stalled = new ArrayList<>();
  final AtomicInteger keys = new AtomicInteger();

  private void start(int threads, int maxConnections, Duration idle, Duration requestRead)
      throws IOException {
    db = H2Database.open(dir.resolve("server"));
    NotesApplication notes = new NotesApplication(db);
    server = IdempotentServer.builder().database(db)
        .handler(NotesApplication.OPERATION, notes.handler())
        .threads(threads).maxConnections(maxConnections)
        .idleTimeout(idle).requestReadTimeout(requestRead).start();
  }

  @AfterEach
  void stop() throws IOException {
    for (Socket s : stalled) {
      s.close();
    }
    if (server != null) {
      server.close();
      db.close();
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
    s.setSoTimeout(60_000);
    return s;
  }

  private static String head(String key, int contentLength) {
    return "POST /" + NotesApplication.OPERATION + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + HttpContract.IDEMPOTENCY_KEY + ": \"" + key + "\"\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + contentLength + "\r\n\r\n";
  }

  /** Opens {@code perKind} connections of each stalled kind and keeps them. */
  private void stall(int perKind) throws IOException {
    for (int i = 0; i < perKind; i++) {
      stalled.add(connect()); // sends nothing
      Socket halfLine = connect();
      halfLine.getOutputStream().write("POST /note.put HT".getBytes(StandardCharsets.US_ASCII));
      stalled.add(halfLine);
      Socket halfBody = connect();
      halfBody.getOutputStream().write((head("stalled-" + i, BODY.length())
          + BODY.substring(0, 10)).getBytes(StandardCharsets.US_ASCII));
      stalled.add(halfBody);
    }
  }

  /** A whole request on a fresh connection; the status line of its answer. */
  private String putNote() throws IOException {
    try (Socket s = connect()) {
      s.getOutputStream().write((head("legit-" + keys.incrementAndGet(), BODY.length()) + BODY)
          .getBytes(StandardCharsets.US_ASCII));
      return readStatusLine(s.getInputStream());
    }
  }

  private static String readStatusLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != -1 && b != '\r'; b = in.read()) {
      line.write(b);
    }
    return line.toString(StandardCharsets.US_ASCII);
  }

  private static boolean closedByPeer(Socket s) throws IOException {
    s.setSoTimeout(50);
    try {
      InputStream in = s.getInputStream();
      int b;
      do {
        b = in.read(); // drain whatever came before the close
      } while (b != -1);
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  @Test
  void stalledClientsHoldNoRequestThreadAndOthersAreAnswered() throws Exception {
    // Two request threads and 150 stalled connections: the JDK server this replaced answered
    // nobody once its threads were all reading stalled requests.
    start(2, 256, GENEROUS, GENEROUS);
    stall(50);
    for (int i = 0; i < 5; i++) {
      assertThat(putNote()).isEqualTo("HTTP/1.1 201 Created");
    }
    for (Socket s : stalled) {
      assertThat(closedByPeer(s)).as("a stalled connection is still open").isFalse();
    }
  }

  @Test
  void aConnectionThatSendsNoHeadInTimeIsClosed() throws Exception {
    start(2, 256, GENEROUS, Duration.ofMillis(300));
    Socket silent = connect();
    stalled.add(silent);
    Socket halfLine = connect();
    stalled.add(halfLine);
    halfLine.getOutputStream().write("POST /note.put HT".getBytes(StandardCharsets.US_ASCII));
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
        .until(() -> closedByPeer(silent) && closedByPeer(halfLine));
    // a connection that keeps its requests coming is not cut between them
    try (Socket keepAlive = connect()) {
      for (int i = 0; i < 3; i++) {
        keepAlive.getOutputStream().write((head("ka-" + i, BODY.length()) + BODY)
            .getBytes(StandardCharsets.US_ASCII));
        assertThat(readStatusLine(keepAlive.getInputStream())).isEqualTo("HTTP/1.1 201 Created");
        skipRestOfAnswer(keepAlive.getInputStream());
      }
    }
  }

  private static void skipRestOfAnswer(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      head.write(in.read());
    }
    String text = head.toString(StandardCharsets.US_ASCII).toLowerCase(java.util.Locale.ROOT);
    int at = text.indexOf("content-length:");
    int length = Integer.parseInt(text.substring(at + 15, text.indexOf('\r', at)).strip());
    in.readNBytes(length);
  }

  @Test
  void aBodyNotCompleteInTimeIsClosedAndNothingIsStored() throws Exception {
    start(2, 256, GENEROUS, Duration.ofMillis(300));
    Socket halfBody = connect();
    stalled.add(halfBody);
    halfBody.getOutputStream().write((head("half", BODY.length()) + BODY.substring(0, 10))
        .getBytes(StandardCharsets.US_ASCII));
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
        .until(() -> closedByPeer(halfBody));
    assertThat(server.recordCount()).isZero();
  }

  @Test
  void aChunkedBodyOverTheLimitIsAnswered413() throws Exception {
    start(2, 256, GENEROUS, GENEROUS);
    try (Socket s = connect()) {
      String chunk = "x".repeat(4000);
      StringBuilder request = new StringBuilder("POST /" + NotesApplication.OPERATION
          + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + HttpContract.IDEMPOTENCY_KEY + ": \"big\"\r\n"
          + "Transfer-Encoding: chunked\r\n\r\n");
      for (int i = 0; i < 300; i++) { // 1.2 MB, over the default 1 MiB
        request.append(Integer.toHexString(chunk.length())).append("\r\n").append(chunk)
            .append("\r\n");
      }
      request.append("0\r\n\r\n");
      CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
        try {
          s.getOutputStream().write(request.toString().getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
          // the server may close before reading everything
        }
      });
      assertThat(readStatusLine(s.getInputStream())).isEqualTo("HTTP/1.1 413 Payload Too Large");
      sending.get(60, java.util.concurrent.TimeUnit.SECONDS);
    }
    assertThat(server.recordCount()).isZero();
  }

  @Test
  void aSilentConnectionIsClosedAfterTheIdleTimeout() throws Exception {
    start(2, 256, Duration.ofMillis(300), GENEROUS);
    Socket silent = connect();
    stalled.add(silent);
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
        .until(() -> closedByPeer(silent));
  }

  @Test
  void connectionsBeyondTheLimitWaitUntilOneCloses() throws Exception {
    start(2, 2, GENEROUS, GENEROUS);
    stall(1); // three connections: the third waits in the accept queue
    Socket first = stalled.get(0);
    CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return putNote();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    Awaitility.await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
        .until(() -> !waiting.isDone());
    first.close();
    stalled.get(1).close();
    assertThat(waiting.get(60, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo("HTTP/1.1 201 Created");
  }

  /**
   * Closing the receiver with a grace of a minute still answers a request that is being handled,
   * and returns once it is answered, with a client's keep-alive connection still open. (That
   * close no longer waits for idle connections is a speed, not a contract: a replayer's pooled
   * OkHttp connection held each close for the whole default grace of 1 s, now about 2 ms.)
   */
  @Test
  void closingWithAGraceAnswersTheRequestInFlight() throws Exception {
    db = H2Database.open(dir.resolve("server"));
    java.util.concurrent.CountDownLatch handling = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    server = IdempotentServer.builder().database(db).stopGrace(Duration.ofMinutes(1))
        .handler(NotesApplication.OPERATION, (tx, request) -> {
          if (request.idempotencyKey().equals("idle")) {
            return HandlerResponse.json(201, "{}");
          }
          handling.countDown();
          release.await();
          return HandlerResponse.json(201, "{}");
        }).start();
    // a real client's keep-alive connection, answered and then idle in its pool
    java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder()
        .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
    java.net.http.HttpResponse<String> idleAnswer = client.send(java.net.http.HttpRequest
        .newBuilder(java.net.URI.create(server.baseUrl() + "/" + NotesApplication.OPERATION))
        .header(HttpContract.IDEMPOTENCY_KEY, "\"idle\"").header("Content-Type",
            "application/json").POST(java.net.http.HttpRequest.BodyPublishers.ofString(BODY))
        .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(idleAnswer.statusCode()).isEqualTo(201);
    Socket busy = connect();
    busy.getOutputStream().write((head("in-flight", BODY.length()) + BODY)
        .getBytes(StandardCharsets.US_ASCII));
    assertThat(handling.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
    Awaitility.await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(20))
        .until(() -> !closing.isDone());
    release.countDown();
    try (busy) {
      assertThat(readStatusLine(busy.getInputStream())).isEqualTo("HTTP/1.1 201 Created");
    }
    closing.get(30, java.util.concurrent.TimeUnit.SECONDS); // the client has not closed its side
    server = null;
    db.close();
  }
}
