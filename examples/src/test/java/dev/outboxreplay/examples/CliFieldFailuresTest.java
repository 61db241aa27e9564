package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What users did to the tool in the field, each as it was reported (issue "What the world did to
 * it this time"), each a test that fails when the failure comes back. The files a killed process
 * left are the field's own ({@code files/}).
 */
@Execution(ExecutionMode.CONCURRENT)
class CliFieldFailuresTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void aRefusedEnqueueTouchesNoFileSoItNeverDeletesTheFileAnotherEnqueueJustFilled()
      throws Exception {
    Path good = dir.resolve("good.jsonl");
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 200; i++) {
      lines.append("{\"operation\":\"note.put\",\"entity\":\"n").append(i % 7)
          .append("\",\"payload\":{\"i\":").append(i).append("}}\n");
    }
    Files.writeString(good, lines);
    Path huge = dir.resolve("huge.jsonl");
    Files.writeString(huge, "{\"operation\":\"note.put\",\"entity\":\"n\",\"payload\":{\"x\":\""
        + "a".repeat(1 << 20) + "\"}}\n");
    ToolRun alone = ToolRun.of("enqueue", "--db", dir.resolve("alone").toString(),
        "--from", huge.toString());
    assertThat(alone.exit()).isEqualTo(2);
    assertThat(alone.err()).contains("over the limit").contains("nothing was accepted");
    assertThat(dir.resolve("alone.mv.db")).as("refused before any file").doesNotExist();
    for (int round = 0; round < 4; round++) {
      String db = dir.resolve("race-" + round).resolve("app").toString();
      CompletableFuture<ToolRun> filling =
          CompletableFuture.supplyAsync(() -> ToolRun.of("enqueue", "--db", db, "--from",
              good.toString()));
      ToolRun refused = ToolRun.of("enqueue", "--db", db, "--from", huge.toString());
      ToolRun filled = filling.get();
      assertThat(refused.exit()).isEqualTo(2);
      assertThat(filled.exit()).as(filled.err()).isZero();
      assertThat(filled.lines()).hasSize(200);
      assertThat(queued(db)).as("round %d: the printed ids are all in the file", round)
          .isEqualTo(200);
    }
  }

  @Test
  void aStringPayloadFromAFileIsStoredAsTheSameStringFromTheOption() throws Exception {
    String db = dir.resolve("app").toString();
    ToolRun direct = ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity",
        "n1", "--payload", "\"s\"");
    assertThat(direct.exit()).as(direct.err()).isZero();
    Path file = Files.writeString(dir.resolve("s.jsonl"),
        "{\"operation\":\"note.put\",\"entity\":\"n2\",\"payload\":\"s\"}\n"
            + "{\"operation\":\"note.put\",\"entity\":\"n3\",\"payload\":\"with \\\"quotes\\\"\"}\n");
    ToolRun fromFile = ToolRun.of("enqueue", "--db", db, "--from", file.toString());
    assertThat(fromFile.exit()).as(fromFile.err()).isZero();
    List<String> payloads = new ArrayList<>();
    for (String line : ToolRun.of("list", "--db", db, "--status", "queued", "--json").lines()) {
      payloads.add(JSON.readTree(line).path("payload").toString());
    }
    assertThat(payloads).containsExactly("\"s\"", "\"s\"", "\"with \\\"quotes\\\"\"");
  }

  @Test
  void badOptionValuesGetOneLineAndExitTwoNeverAStackTrace() throws Exception {
    String db = dir.resolve("app").toString();
    assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity", "n",
        "--payload", "{}").exit()).isZero();
    String url = "http://127.0.0.1:1";
    List<String[]> bad = List.of(
        new String[] {"replay", "--db", db, "--url", url, "--lease", "0s"},
        new String[] {"replay", "--db", db, "--url", url, "--timeout", "99999999999999999999s"},
        new String[] {"replay", "--db", db, "--url", url, "--timeout", "9999999999999999d"},
        new String[] {"replay", "--db", db, "--url", url, "--max-interval", "0s"},
        new String[] {"replay", "--db", db, "--url", url, "--key-format", "raw"},
        new String[] {"replay", "--db", db, "--url", url, "--lease", "1s"},
        new String[] {"list", "--db", db, "--status", "queued", "--limit", "-1"},
        new String[] {"status", "--db", db, "--wait", "soon"},
        new String[] {"no-such-command"});
    for (String[] args : bad) {
      ToolRun r = ToolRun.of(args);
      String what = String.join(" ", args);
      assertThat(r.exit()).as(what).isEqualTo(2);
      assertThat(r.err().strip().lines().count()).as(what + ": " + r.err()).isEqualTo(1);
      assertThat(r.err()).as(what).doesNotContain("\tat ").doesNotContain("Exception:")
          .doesNotContain("SQL statement");
    }
  }

  @Test
  void serveOnABusyPortGetsOneLineExitTwoAndLeavesNoFile() throws Exception {
    try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      ToolRun r = ToolRun.of("serve", "--db", dir.resolve("server").toString(), "--port",
          Integer.toString(busy.getLocalPort()));
      assertThat(r.exit()).isEqualTo(2);
      assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
      assertThat(r.err()).contains("cannot serve on 127.0.0.1:" + busy.getLocalPort());
    }
    assertThat(dir.resolve("server.mv.db")).doesNotExist();
  }

  @Test
  void aFailedWriteToStandardOutputExitsSevenAndEnqueueSaysItsCommandsAreStored()
      throws Exception {
    String db = dir.resolve("app").toString();
    ToolRun enqueued = ToolRun.withOutputFailingAfter(10, "enqueue", "--db", db, "--operation",
        "note.put", "--entity", "n", "--payload", "{}");
    assertThat(enqueued.exit()).isEqualTo(7);
    assertThat(enqueued.err()).contains("ARE accepted").contains("outbox list");
    assertThat(queued(db)).isEqualTo(1);
    for (String[] args : List.of(new String[] {"export", "--db", db},
        new String[] {"list", "--db", db, "--status", "queued"},
        new String[] {"status", "--db", db})) {
      ToolRun r = ToolRun.withOutputFailingAfter(10, args);
      assertThat(r.exit()).as(args[0]).isEqualTo(7);
      assertThat(r.err()).as(args[0]).contains("cannot write to standard output");
    }
  }

  /**
   * Files whose creating process was killed during their first open: two from the field, and
   * one ({@code uncommitted}, 12 KB) whose only chunk holds H2's first transaction uncommitted,
   * which H2 refuses to open read-only ("The database is read only [90097]"): it was made by
   * killing {@code enqueue} under load, as {@code KilledReplayLocksNoOneOutTest} does. Reading
   * commands read it without writing it (the bytes stay the same).
   */
  @ParameterizedTest
  @ValueSource(strings = {"no-tables", "layout-2", "uncommitted"})
  void aFileKilledDuringItsFirstOpenReadsEmptyAndTheNextWriteFinishesIt(String kind)
      throws Exception {
    Path file = dir.resolve("app.mv.db");
    copyResource("killed-during-first-open-" + kind + ".mv.db", file);
    byte[] before = Files.readAllBytes(file);
    String db = dir.resolve("app").toString();
    ToolRun status = ToolRun.of("status", "--db", db, "--json");
    assertThat(status.exit()).as(status.err()).isZero();
    assertThat(status.lastJson().path("counts").path("queued").asLong()).isZero();
    assertThat(status.err()).contains("never finished");
    for (String[] args : List.of(new String[] {"export", "--db", db},
        new String[] {"list", "--db", db, "--status", "queued"})) {
      ToolRun r = ToolRun.of(args);
      assertThat(r.exit()).as(args[0] + ": " + r.err()).isZero();
      assertThat(r.out()).isEmpty();
    }
    assertThat(Files.readAllBytes(file)).as("read without a byte written").isEqualTo(before);
    ToolRun enqueued = ToolRun.of("enqueue", "--db", db, "--operation", "note.put",
        "--entity", "n", "--payload", "{}");
    assertThat(enqueued.exit()).as(enqueued.err()).isZero();
    ToolRun after = ToolRun.of("status", "--db", db, "--json");
    assertThat(after.err()).doesNotContain("never finished");
    assertThat(after.lastJson().path("counts").path("queued").asLong()).isEqualTo(1);
  }

  /**
   * A creator killed after H2 made the file but before H2 wrote a byte (seen once in 54 kills of
   * {@code KilledReplayLocksNoOneOutTest} on a clean clone): a 0-byte file beside H2's lock
   * file, whose owner is gone (the field's stale lock file). It reads as empty, and the next
   * write starts it. An empty file without a lock file is not the library's and stays refused.
   */
  @Test
  void anEmptyFileBesideAStaleLockReadsEmptyAndTheNextWriteStartsItAnEmptyFileAloneIsRefused()
      throws Exception {
    Path file = dir.resolve("app.mv.db");
    Files.createFile(file);
    copyResource("stale-socket-lock.lock.db", dir.resolve("app.lock.db"));
    String db = dir.resolve("app").toString();
    ToolRun status = ToolRun.of("status", "--db", db, "--json");
    assertThat(status.exit()).as(status.err()).isZero();
    assertThat(status.err()).contains("never finished");
    assertThat(status.lastJson().path("counts").path("queued").asLong()).isZero();
    assertThat(Files.size(file)).as("read without a byte written").isZero();
    ToolRun enqueued = ToolRun.of("enqueue", "--db", db, "--operation", "note.put",
        "--entity", "n", "--payload", "{}");
    assertThat(enqueued.exit()).as(enqueued.err()).isZero();
    assertThat(queued(db)).isEqualTo(1);

    Path alone = dir.resolve("alone").resolve("app.mv.db");
    Files.createDirectories(alone.getParent());
    Files.createFile(alone);
    String aloneDb = alone.getParent().resolve("app").toString();
    for (String[] args : List.of(new String[] {"status", "--db", aloneDb},
        new String[] {"enqueue", "--db", aloneDb, "--operation", "note.put", "--entity", "n",
            "--payload", "{}"})) {
      ToolRun r = ToolRun.of(args);
      assertThat(r.exit()).as(args[0]).isEqualTo(2);
      assertThat(r.err()).contains("it is empty (0 bytes)");
    }
    assertThat(Files.size(alone)).isZero();
  }

  @Test
  void aStaleLockLeftByAKilledReplayLocksNoCommandOut() throws Exception {
    String db = dir.resolve("app").toString();
    for (int i = 0; i < 3; i++) {
      assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity", "n",
          "--payload", "{\"entity\":\"n\",\"seq\":" + i + "}").exit()).isZero();
    }
    copyResource("stale-socket-lock.lock.db", dir.resolve("app.lock.db"));
    for (String[] args : List.of(new String[] {"status", "--db", db},
        new String[] {"list", "--db", db, "--status", "queued"},
        new String[] {"export", "--db", db})) {
      ToolRun r = ToolRun.of(args);
      assertThat(r.exit()).as(args[0] + ": " + r.err()).isZero();
    }
    try (H2Database serverDb = H2Database.open(dir.resolve("server"));
        IdempotentServer server = IdempotentServer.builder().database(serverDb)
            .handler(NotesApplication.OPERATION, new NotesApplication(serverDb).handler())
            .start()) {
      ToolRun replay = ToolRun.of("replay", "--db", db, "--url", server.baseUrl(),
          "--until-drained", "--timeout", "60s");
      assertThat(replay.exit()).as(replay.err()).isZero();
      assertThat(replay.lastJson().path("acked").asLong()).isEqualTo(3);
    }
  }

  @Test
  void aLostProbeAnswerIsProbedAgainAndTheReplayGoesOn() throws Exception {
    String db = dir.resolve("app").toString();
    assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity", "n",
        "--payload", "{}").exit()).isZero();
    AtomicInteger probes = new AtomicInteger();
    AtomicInteger posts = new AtomicInteger();
    HttpServer receiver = HttpServer.create(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    receiver.createContext("/", exchange -> {
      try (exchange) {
        if (exchange.getRequestMethod().equals("HEAD")) {
          if (probes.incrementAndGet() <= 2) {
            return; // the answer to the first two probes is lost
          }
          exchange.sendResponseHeaders(200, -1);
          return;
        }
        exchange.getRequestBody().readAllBytes();
        posts.incrementAndGet();
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(201, body.length);
        exchange.getResponseBody().write(body);
      }
    });
    receiver.start();
    try {
      ToolRun r = ToolRun.of("replay", "--db", db, "--url",
          "http://127.0.0.1:" + receiver.getAddress().getPort(), "--no-reconciliation",
          "--timeout", "30s");
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(probes.get()).isEqualTo(3);
      assertThat(posts.get()).isEqualTo(1);
    } finally {
      receiver.stop(0);
    }
  }

  @Test
  void aReplayThatEndsWithOpenCommandsSaysWhenTheNextAttemptIsDueAndWhyWithinTheCeiling()
      throws Exception {
    String db = dir.resolve("app").toString();
    assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity", "n1",
        "--payload", "{\"entity\":\"n1\",\"seq\":1}").exit()).isZero();
    try (H2Database serverDb = H2Database.open(dir.resolve("server"));
        IdempotentServer server = IdempotentServer.builder().database(serverDb)
            .handler(NotesApplication.OPERATION, new NotesApplication(serverDb).handler())
            .faults(request -> FaultPlan.Fault.fail(503, Duration.ofHours(1))).start()) {
      // without --until-drained: one pass sends, the next finds nothing due, and replay ends
      // however long the machine took to get there (a timeout would cut a slow machine short)
      ToolRun r = ToolRun.of("replay", "--db", db, "--url", server.baseUrl(),
          "--timeout", "120s", "--max-interval", "30s");
      assertThat(r.exit()).isEqualTo(3);
      assertThat(r.err()).contains("the next attempt is due at").contains("http_503")
          .contains("retryable_failed after 1 attempt(s)");
    }
    JsonNode row = ToolRun.of("list", "--db", db, "--status", "retryable_failed", "--json")
        .lastJson();
    Duration wait = Duration.between(Instant.parse(row.path("lastError").path("at").asText()),
        Instant.parse(row.path("nextAttemptAt").asText()));
    assertThat(wait).as("Retry-After of an hour, capped at --max-interval")
        .isLessThanOrEqualTo(Duration.ofSeconds(30)).isGreaterThan(Duration.ofSeconds(29));
  }

  /**
   * Field report #39: an {@code enqueue} under {@code -Xmx32m} spun at 100% CPU for more than
   * ten minutes while closing the file after running out of memory. Reproduced here on H2
   * 2.5.252: the out-of-memory error closes H2's store mid-write, and the rollback of the close
   * (or H2's shutdown hook) spins in {@code MVStore.registerVersionUsage}, 1 run in 3 to 6 of a
   * 10,000-line batch. Each child below must end by itself, with one line that says what was
   * stored.
   */
  @Test
  void anEnqueueThatRunsOutOfMemoryEndsWithOneLineThatSaysWhatItStoredAndNeverSpins()
      throws Exception {
    String text = "x".repeat(400);
    Path batch = dir.resolve("batch.jsonl");
    Path file = dir.resolve("file.jsonl");
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 25_000; i++) {
      lines.append("{\"operation\":\"note.put\",\"entity\":\"n").append(i % 500)
          .append("\",\"payload\":{\"text\":\"").append(text).append("\",\"i\":")
          .append(i).append("}}\n");
      if (i == 9_999) {
        Files.writeString(batch, lines); // fits while read, not while accepted
      }
    }
    Files.writeString(file, lines); // does not fit while read
    List<Process> children = new ArrayList<>();
    List<Path> dbs = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      Path db = dir.resolve("oom-" + i).resolve("app");
      Files.createDirectories(db.getParent());
      dbs.add(db);
      children.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java")
          .toString(), "-Xmx32m", "-cp", System.getProperty("java.class.path"),
          dev.outboxreplay.examples.cli.OutboxTool.class.getName(), "enqueue", "--db",
          db.toString(), "--from", (i == 0 ? file : batch).toString())
          .redirectOutput(db.resolveSibling("out").toFile())
          .redirectError(db.resolveSibling("err").toFile()).start());
    }
    try {
      checkOutOfMemoryChildren(children, dbs);
    } finally {
      for (Process child : children) {
        child.destroyForcibly(); // one left spinning would eat a core for good
      }
    }
  }

  private static void checkOutOfMemoryChildren(List<Process> children, List<Path> dbs)
      throws Exception {
    for (int i = 0; i < children.size(); i++) {
      Process child = children.get(i);
      // a real child JVM: bounded wait; one that spins never ends by itself
      boolean ended = child.waitFor(150, java.util.concurrent.TimeUnit.SECONDS);
      if (!ended) {
        child.destroyForcibly().waitFor();
      }
      String err = Files.readString(dbs.get(i).resolveSibling("err"));
      assertThat(ended).as("child %d ended by itself; stderr: %s", i, err).isTrue();
      assertThat(child.exitValue()).as(err).isEqualTo(2);
      List<String> errLines = err.lines()
          .filter(l -> !l.startsWith("Picked up JAVA_TOOL_OPTIONS")).toList();
      assertThat(errLines).as("one line, no stack trace").hasSize(1);
      assertThat(errLines.get(0)).contains("does not fit in this JVM's memory (max heap");
      assertThat(Files.readString(dbs.get(i).resolveSibling("out"))).isEmpty();
      if (i == 0) {
        assertThat(errLines.get(0)).contains("nothing was accepted");
        assertThat(dbs.get(i).resolveSibling("app.mv.db")).as("read before any file")
            .doesNotExist();
        continue;
      }
      long queued = queued(dbs.get(i).toString());
      if (errLines.get(0).contains("nothing was accepted")) {
        assertThat(queued).isZero();
      } else if (errLines.get(0).contains("are stored")) {
        assertThat(queued).isEqualTo(10_000);
      } else {
        assertThat(errLines.get(0)).contains("is unknown: look for ids");
        assertThat(queued).isIn(0L, 10_000L);
      }
    }
  }

  private static long queued(String db) throws Exception {
    ToolRun status = ToolRun.of("status", "--db", db, "--json");
    assertThat(status.exit()).as(status.err()).isZero();
    return status.lastJson().path("counts").path("queued").asLong();
  }

  private static void copyResource(String name, Path target) throws Exception {
    try (InputStream in = CliFieldFailuresTest.class.getResourceAsStream("/files/" + name)) {
      Files.copy(in, target);
    }
  }
}
