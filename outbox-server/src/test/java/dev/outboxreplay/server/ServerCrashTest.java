package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.testkit.ChildJvm;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The server process is SIGKILLed between receiving a request and answering it. The retry with
 * the same key gets a clean first processing (killed before the commit) or the stored answer
 * (killed after it), and never a second business effect.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("ServerCrashTest") // its own methods one after another
class ServerCrashTest {
  @TempDir Path dir;
  final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private ChildJvm startServer(String name, String... stalls) throws Exception {
    String[] args = new String[stalls.length + 1];
    args[0] = dir.resolve("server").toString();
    System.arraycopy(stalls, 0, args, 1, stalls.length);
    return ChildJvm.start(ServerChild.class, dir.resolve(name + ".err"), args);
  }

  private static int port(ChildJvm child) throws Exception {
    String line = child.nextLine(Duration.ofSeconds(60));
    assertThat(line).startsWith("PORT ");
    return Integer.parseInt(line.substring(5));
  }

  private CompletableFuture<HttpResponse<String>> send(int port, String key, String body) {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/note.put"))
        .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString(key))
        .timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void killedBeforeCommitRetryIsProcessedAfreshAndKilledAfterCommitRetryGetsTheStoredAnswer()
      throws Exception {
    String noteBefore = "{\"entity\":\"n1\",\"seq\":1}";
    String noteAfter = "{\"entity\":\"n2\",\"seq\":1}";
    try (ChildJvm first = startServer("first", "before:k-before", "after:k-after")) {
      int port = port(first);
      CompletableFuture<HttpResponse<String>> lost = send(port, "k-before", noteBefore);
      assertThat(first.nextLine(Duration.ofSeconds(60))).isEqualTo("STALLED k-before");
      first.kill();
      assertThat(lost).failsWithin(Duration.ofSeconds(30));
    }
    try (ChildJvm second = startServer("second", "after:k-after")) {
      int port = port(second);
      CompletableFuture<HttpResponse<String>> lost = send(port, "k-after", noteAfter);
      assertThat(second.nextLine(Duration.ofSeconds(60))).isEqualTo("STALLED k-after");
      second.kill();
      assertThat(lost).failsWithin(Duration.ofSeconds(30));
    }
    try (H2Database db = H2Database.builder().file(dir.resolve("server"))
        .multiProcess(false).build()) {
      NotesApplication notes = new NotesApplication(db);
      assertThat(notes.effectCount("default", "k-before"))
          .as("killed inside the business transaction: no effect").isZero();
      assertThat(notes.effectCount("default", "k-after"))
          .as("killed after the commit: the effect stands").isEqualTo(1);
    }
    try (ChildJvm third = startServer("third")) {
      int port = port(third);
      HttpResponse<String> fresh = send(port, "k-before", noteBefore).get();
      assertThat(fresh.statusCode()).isEqualTo(201);
      assertThat(fresh.headers().firstValue(HttpContract.REPLAYED))
          .as("clean first processing").contains("false");
      HttpResponse<String> replayed = send(port, "k-after", noteAfter).get();
      assertThat(replayed.statusCode()).isEqualTo(201);
      assertThat(replayed.headers().firstValue(HttpContract.REPLAYED))
          .as("the stored answer").contains("true");
      third.kill();
    }
    try (H2Database db = H2Database.builder().file(dir.resolve("server"))
        .multiProcess(false).build()) {
      NotesApplication notes = new NotesApplication(db);
      assertThat(notes.effectCount("default", "k-before")).isEqualTo(1);
      assertThat(notes.effectCount("default", "k-after")).isEqualTo(1);
      assertThat(notes.keysAppliedMoreThanOnce()).isZero();
    }
  }
}
