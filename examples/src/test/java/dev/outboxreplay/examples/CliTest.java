package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import dev.outboxreplay.examples.cli.OutboxTool;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import picocli.CommandLine;

/** The outbox tool's contract: output shapes, exit codes, and bad input losing nothing. */
// beside other classes and its own methods beside each other (junit-platform.properties): each
// method has its own server, files and in-process tool runs
@Execution(ExecutionMode.CONCURRENT)
class CliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  H2Database serverDb;
  IdempotentServer server;
  AtomicReference<FaultPlan> faults = new AtomicReference<>(FaultPlan.NONE);
  String db;

  @BeforeEach
  void start() throws Exception {
    serverDb = H2Database.open(dir.resolve("server"));
    server = IdempotentServer.builder().database(serverDb)
        .handler(NotesApplication.OPERATION, new NotesApplication(serverDb).handler())
        .faults(request -> faults.get().onRequest(request)).start();
    db = dir.resolve("client").toString();
  }

  @AfterEach
  void stop() {
    server.close();
    serverDb.close();
  }

  private ToolRun run(String... args) {
    return ToolRun.of(args);
  }

  private ToolRun enqueue(String entity, String payload) {
    return run("enqueue", "--db", db, "--operation", "note.put", "--entity", entity,
        "--payload", payload);
  }

  private long count(String status) throws Exception {
    ToolRun s = run("status", "--db", db, "--json");
    assertThat(s.exit()).as(s.err()).isZero();
    return s.lastJson().path("counts").path(status).asLong();
  }

  @Test
  void enqueuePrintsTheIdAndKeyAndStatusCountsIt() throws Exception {
    ToolRun r = enqueue("n1", "{\"entity\":\"n1\",\"seq\":1}");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode line = r.lastJson();
    assertThat(line.path("commandId").asText()).hasSize(36);
    assertThat(line.path("idempotencyKey").asText()).startsWith("note.put:n1:");
    assertThat(count("queued")).isEqualTo(1);
    assertThat(run("status", "--db", db, "--json").lastJson()
        .path("oldestPendingAgeSeconds").asLong()).isGreaterThanOrEqualTo(0);
    ToolRun table = run("status", "--db", db);
    assertThat(table.out()).contains("queued").contains("oldest pending");
  }

  @Test
  void statusCountsPoisonedCommandsAndTheOldestPendingOne() throws Exception {
    enqueue("n1", "{\"entity\":\"n1\",\"seq\":1}");
    enqueue("n2", "{\"entity\":\"n2\",\"seq\":1}");
    try (H2Database client = H2Database.open(Path.of(db))) {
      dev.outboxreplay.h2.H2OutboxStore store = dev.outboxreplay.h2.H2OutboxStore.create(client);
      java.time.Instant now = java.time.Instant.now();
      dev.outboxreplay.OutboxRecord held =
          store.claim("test", Duration.ofMinutes(1), 1, now.plusSeconds(1)).get(0);
      store.complete(held.commandId(), held.fencingToken(), dev.outboxreplay.Status.CLAIMED,
          dev.outboxreplay.Outcome.rejected(new dev.outboxreplay.ErrorInfo(
              "poison_max_attempts", "gave up", now), null), now);
    }
    JsonNode status = run("status", "--db", db, "--json").lastJson();
    assertThat(status.path("poison").asLong()).isEqualTo(1);
    assertThat(status.path("counts").path("rejected").asLong()).isEqualTo(1);
    assertThat(status.path("counts").path("queued").asLong()).isEqualTo(1);
  }

  @Test
  void aMalformedLineIsReportedByNumberAndNothingIsAcceptedUnlessAsked() throws Exception {
    Path file = dir.resolve("commands.jsonl");
    Files.writeString(file, """
        {"operation":"note.put","entity":"n1","payload":{"entity":"n1","seq":1}}
        {"operation":"note.put","entity":"n2","payload":{"entity":"n2","seq":1}}
        {"operation":"note.put","entity":"n3","payload":{"entity":
        {"operation":"note.put","entity":"n4","payload":{"entity":"n4","seq":1}}
        """);
    ToolRun refused = run("enqueue", "--db", db, "--from", file.toString());
    assertThat(refused.exit()).isEqualTo(2);
    assertThat(refused.err()).contains("line 3").contains("nothing was accepted");
    assertThat(refused.out()).isEmpty();
    ToolRun prefix = run("enqueue", "--db", db, "--from", file.toString(), "--accept-valid-prefix");
    assertThat(prefix.exit()).as(prefix.err()).isZero();
    assertThat(prefix.lines()).hasSize(2);
    assertThat(prefix.err()).contains("line 3");
    assertThat(count("queued")).isEqualTo(2);
  }

  @Test
  void aFromFileIsReadAsStrictlyAsPayloadAndStoresTheSameBytes() throws Exception {
    String odd = "{\"entity\":\"n1\",\"big\":1E30,\"fine\":4.50,\"tiny\":2e-3}";
    ToolRun direct = enqueue("n1", odd);
    assertThat(direct.exit()).as(direct.err()).isZero();
    Path file = dir.resolve("odd.jsonl");
    Files.writeString(file, "{\"operation\":\"note.put\",\"entity\":\"n2\",\"payload\":"
        + odd.replace("n1", "n2") + "}\n");
    ToolRun fromFile = run("enqueue", "--db", db, "--from", file.toString());
    assertThat(fromFile.exit()).as(fromFile.err()).isZero();
    List<String> stored = run("list", "--db", db, "--status", "queued", "--json").lines();
    assertThat(stored).hasSize(2);
    // the payloads as list prints them: the stored canonical bytes, verbatim
    String first = stored.get(0).replaceAll(".*\"payload\":(\\{[^}]*}).*", "$1");
    String second = stored.get(1).replaceAll(".*\"payload\":(\\{[^}]*}).*", "$1");
    assertThat(second).isEqualTo(first.replace("n1", "n2"));
    // RFC 8785's forms, whichever way the payload came in
    assertThat(first).contains("\"big\":1e+30,\"entity\":\"n1\",\"fine\":4.5,\"tiny\":0.002");
    for (String[] changed : new String[][] {
        {"{\"big\":1e400}", "$.big"}, {"{\"fine\":0.1000000000000000000000000001}", "$.fine"},
        {"{\"id\":9007199254740993}", "$.id"}}) {
      ToolRun direct2 = enqueue("n9", changed[0]);
      assertThat(direct2.exit()).as(changed[0]).isEqualTo(2);
      assertThat(direct2.err()).contains(changed[1]).doesNotContain("\tat ");
      Files.writeString(file, "{\"operation\":\"note.put\",\"entity\":\"n9\",\"payload\":"
          + changed[0] + "}\n");
      ToolRun fromFile2 = run("enqueue", "--db", db, "--from", file.toString());
      assertThat(fromFile2.exit()).as(changed[0]).isEqualTo(2);
      assertThat(fromFile2.err()).contains("line 1").contains(changed[1]);
    }

    for (String[] bad : new String[][] {
        {"{\"operation\":\"note.put\",\"entity\":\"n3\",\"payload\":{\"a\":1,\"a\":2}}",
            "Duplicate field 'a'"},
        {"{\"operation\":\"note.put\",\"entity\":\"n3\",\"payload\":{}} trailing",
            "after the JSON object"},
        {"{\"operation\":\"note.put\",\"entity\":\"n3\",\"payload\":{}}"
            + "{\"operation\":\"x\",\"entity\":\"y\",\"payload\":{}}", "after the JSON object"},
        {"{\"operation\":\"note.put\",\"operation\":\"other\",\"entity\":\"n3\","
            + "\"payload\":{}}", "Duplicate field 'operation'"},
        {"{\"operation\":\"..\",\"entity\":\"n3\",\"payload\":{}}",
            "field \"operation\": must be one URL path segment"}}) {
      Files.writeString(file, "{\"operation\":\"note.put\",\"entity\":\"ok\",\"payload\":{}}\n"
          + bad[0] + "\n");
      ToolRun refused = run("enqueue", "--db", db, "--from", file.toString());
      assertThat(refused.exit()).as(bad[0]).isEqualTo(2);
      assertThat(refused.err()).as(bad[0]).contains("line 2").contains(bad[1])
          .contains("nothing was accepted").doesNotContain("\tat ");
    }
    assertThat(count("queued")).as("nothing of the refused files").isEqualTo(2);
  }

  @Test
  void unreadableInputAndAnUnusableDbGetOneLineAndExitTwoAndLeaveNoFile() throws Exception {
    Path file = dir.resolve("latin1.jsonl");
    byte[] line1 = "{\"operation\":\"note.put\",\"entity\":\"a\",\"payload\":{}}\n"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] line2 = {'{', '"', 'x', '"', ':', '"', (byte) 0xE9, '"', '}', '\n'};
    Files.write(file, java.nio.ByteBuffer.allocate(line1.length + line2.length).put(line1)
        .put(line2).array());
    Path fresh = dir.resolve("fresh");
    ToolRun latin1 = run("enqueue", "--db", fresh.toString(), "--from", file.toString());
    assertThat(latin1.exit()).isEqualTo(2);
    assertThat(latin1.err()).contains("line 2 is not valid UTF-8").doesNotContain("\tat ");
    ToolRun directory = run("enqueue", "--db", fresh.toString(), "--from", dir.toString());
    assertThat(directory.exit()).isEqualTo(2);
    assertThat(directory.err()).contains("is a directory").doesNotContain("\tat ");
    ToolRun badPayload = run("enqueue", "--db", fresh.toString(), "--operation", "note.put",
        "--entity", "a", "--payload", "[1,]");
    assertThat(badPayload.exit()).isEqualTo(2);
    assertThat(dir.resolve("fresh.mv.db")).as("a refused enqueue leaves no new file")
        .doesNotExist();
    Path aFile = Files.writeString(dir.resolve("plain.txt"), "x");
    ToolRun unusable = run("enqueue", "--db", aFile.resolve("db").toString(), "--operation",
        "note.put", "--entity", "a", "--payload", "{}");
    assertThat(unusable.exit()).isEqualTo(2);
    assertThat(unusable.err().lines()).as(unusable.err()).hasSize(1);
    assertThat(unusable.err()).contains("plain.txt");
  }

  /** A file another process holds for itself: one line naming it, exit 2, for every command. */
  @Test
  void aFileLockedByAnotherProcessGetsOneLineAndExitTwo() throws Exception {
    Path held = dir.resolve("held");
    try (dev.outboxreplay.testkit.ChildJvm holder = dev.outboxreplay.testkit.ChildJvm.start(
        HoldFileChild.class, dir.resolve("holder.err"), held.toString())) {
      assertThat(holder.nextLine(Duration.ofSeconds(60))).as(holder.stderrText())
          .isEqualTo("READY");
      // status waits the default 10 s; the others are told to give up sooner with --wait
      for (String[] args : List.of(new String[] {"status", "--db", held.toString()},
          new String[] {"enqueue", "--db", held.toString(), "--wait", "200ms", "--operation",
              "note.put", "--entity", "a", "--payload", "{}"},
          new String[] {"replay", "--db", held.toString(), "--wait", "200ms", "--url",
              server.baseUrl()})) {
        long started = System.nanoTime();
        ToolRun r = run(args);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(r.exit()).as("%s: %s", args[0], r.err()).isEqualTo(2);
        assertThat(r.err().lines()).as(r.err()).hasSize(1);
        assertThat(r.err()).contains("held.mv.db").contains("locked").doesNotContain("\tat ");
        if (List.of(args).contains("--wait")) {
          assertThat(took).as("%s with --wait 200ms", args[0])
              .isLessThan(H2Database.OPEN_RACE_RETRY);
        }
      }
    }
  }

  /**
   * A receiver that takes the tenant from bearer tokens: replay sends the token read from
   * {@code --token-file} with commands and reconciliation lookups, and gets every command acked;
   * serve refuses a malformed tokens file by line number without printing the line.
   */
  @Test
  void replaySendsTheTokenFromAFileToAReceiverThatAuthenticates() throws Exception {
    try (H2Database authedDb = H2Database.open(dir.resolve("authed-server"));
        IdempotentServer authed = IdempotentServer.builder().database(authedDb)
            .handler(NotesApplication.OPERATION, new NotesApplication(authedDb).handler())
            .tenants(dev.outboxreplay.server.TenantResolver.bearerTokens(
                java.util.Map.of("tok-3f9c", "shop-1")))
            .faults(request -> FaultPlan.Fault.dropResponseAfterCommit()).start()) {
      enqueue("n1", "{\"a\":1}");
      enqueue("n2", "{\"a\":2}");
      Path tokenFile = Files.writeString(dir.resolve("token"), "tok-3f9c\n");
      Files.setPosixFilePermissions(tokenFile, PosixFilePermissions.fromString("rw-r-----"));
      ToolRun replay = run("replay", "--db", db, "--url", authed.baseUrl(), "--tenant", "shop-1",
          "--token-file", tokenFile.toString(), "--until-drained", "--timeout", "30s");
      assertThat(replay.exit()).as(replay.err()).isZero();
      assertThat(replay.err()).contains("warning: --token-file " + tokenFile
          + " can be read by other local users (rw-r-----)").doesNotContain("tok-3f9c");
      assertThat(count("acked")).as("every answer was lost; reconciliation with the token "
          + "found them committed").isEqualTo(2);
      ToolRun missing = run("replay", "--db", db, "--url", authed.baseUrl(), "--tenant",
          "shop-1", "--token-file", dir.resolve("no-such-token").toString());
      assertThat(missing.exit()).isEqualTo(2);
      assertThat(missing.err()).contains("cannot read --token-file");
    }
    // the token without a tenant: refused before anything is sent, the command stays queued
    // (before: 403 for every command, each ended rejected and needed a requeue)
    try (H2Database authedDb = H2Database.open(dir.resolve("authed-server-2"));
        IdempotentServer authed = IdempotentServer.builder().database(authedDb)
            .handler(NotesApplication.OPERATION, new NotesApplication(authedDb).handler())
            .tenants(dev.outboxreplay.server.TenantResolver.bearerTokens(
                java.util.Map.of("tok-3f9c", "shop-1"))).start()) {
      enqueue("n3", "{\"a\":3}");
      ToolRun noTenant = run("replay", "--db", db, "--url", authed.baseUrl(),
          "--token-file", dir.resolve("token").toString(), "--until-drained", "--timeout", "30s");
      assertThat(noTenant.exit()).as(noTenant.err()).isEqualTo(2);
      assertThat(noTenant.err()).contains("--token-file needs --tenant")
          .doesNotContain("tok-3f9c");
      assertThat(count("queued")).as("nothing was sent").isEqualTo(1);
      // a tenant the token does not act for: 403 for every command, and replay says what to do
      ToolRun wrongTenant = run("replay", "--db", db, "--url", authed.baseUrl(), "--tenant",
          "default", "--token-file", dir.resolve("token").toString(), "--until-drained",
          "--timeout", "30s");
      assertThat(wrongTenant.exit()).as(wrongTenant.err()).isEqualTo(5);
      assertThat(wrongTenant.err())
          .contains("1 command(s) ended rejected with 403 (forbidden) for tenant 'default'")
          .contains("give --tenant the token's tenant").doesNotContain("tok-3f9c");
    }
    Path badTokens = Files.writeString(dir.resolve("tokens"), "# token tenant\nsecret-x\n");
    Files.setPosixFilePermissions(badTokens, PosixFilePermissions.fromString("rw----r--"));
    ToolRun serve = run("serve", "--db", dir.resolve("serve-db").toString(), "--tokens",
        badTokens.toString());
    assertThat(serve.exit()).isEqualTo(2);
    assertThat(serve.err()).contains("line 2").doesNotContain("secret-x")
        .contains("warning: --tokens " + badTokens + " can be read by other local users");
  }

  /**
   * An application that encrypts its file: every file command takes the key from a file, and no
   * output quotes it. Without the key, or with another, the file is refused and the message
   * names the option.
   */
  @Test
  void anEncryptedFileIsOpenedWithTheKeyFromAFileThatNoOutputQuotes() throws Exception {
    String secret = "k3y-7c1d-e0a9";
    Path keyFile = Files.writeString(dir.resolve("db.key"), secret + "\n");
    Path wrongKey = Files.writeString(dir.resolve("other.key"), "not-the-key\n");
    String enc = dir.resolve("encrypted").toString();
    List<ToolRun> runs = new java.util.ArrayList<>();
    Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-r--r--"));
    for (int n = 1; n <= 2; n++) {
      runs.add(run("enqueue", "--db", enc, "--key-file", keyFile.toString(), "--operation",
          "note.put", "--entity", "n" + n, "--payload", "{\"a\":" + n + "}"));
      assertThat(runs.get(runs.size() - 1).exit()).as(runs.get(runs.size() - 1).err()).isZero();
      Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
    }
    assertThat(runs.get(0).err()).as("a key file others can read")
        .contains("warning: --key-file " + keyFile + " can be read by other local users");
    assertThat(runs.get(1).err()).as("owner-only").doesNotContain("can be read by other");
    ToolRun status = run("status", "--db", enc, "--key-file", keyFile.toString(), "--json");
    runs.add(status);
    assertThat(status.exit()).as(status.err()).isZero();
    assertThat(status.lastJson().path("counts").path("queued").asLong()).isEqualTo(2);
    ToolRun replay = run("replay", "--db", enc, "--key-file", keyFile.toString(), "--url",
        server.baseUrl(), "--until-drained", "--timeout", "30s");
    runs.add(replay);
    assertThat(replay.exit()).as(replay.err()).isZero();
    for (String[] args : List.of(new String[] {"list", "--status", "acked"},
        new String[] {"export"}, new String[] {"compact"})) {
      List<String> full = new java.util.ArrayList<>(List.of(args));
      full.addAll(List.of("--db", enc, "--key-file", keyFile.toString()));
      ToolRun r = run(full.toArray(String[]::new));
      runs.add(r);
      assertThat(r.exit()).as("%s: %s", args[0], r.err()).isZero();
    }
    ToolRun noKey = run("status", "--db", enc);
    ToolRun otherKey = run("status", "--db", enc, "--key-file", wrongKey.toString());
    ToolRun missingKey = run("status", "--db", enc, "--key-file",
        dir.resolve("no-such-key").toString());
    runs.addAll(List.of(noKey, otherKey, missingKey));
    assertThat(noKey.exit()).isEqualTo(2);
    assertThat(noKey.err()).contains("--key-file");
    assertThat(otherKey.exit()).isEqualTo(2);
    assertThat(otherKey.err()).contains("encryption key may be wrong");
    assertThat(missingKey.exit()).isEqualTo(2);
    assertThat(missingKey.err()).contains("cannot read --key-file");
    for (ToolRun r : runs) {
      assertThat(r.out() + r.err()).doesNotContain(secret);
    }
    // the file is encrypted: the library refuses it without the key, and reads it with it
    assertThatThrownBy(() -> H2Database.builder().file(Path.of(enc)).build())
        .isInstanceOf(OutboxStorageException.class);
    try (H2Database opened = H2Database.builder().file(Path.of(enc))
        .encryptionKey(secret.toCharArray()).build()) {
      assertThat(H2OutboxStore.create(opened).countByStatus()).containsEntry(Status.ACKED, 2L);
    }
  }

  /**
   * status, list and export change no byte and create no file (not even H2's lock file);
   * every command refuses another application's H2 file without adding a table to it, and a
   * damaged file without writing to it.
   */
  @Test
  void readingCommandsWriteNothingAndNoCommandAdoptsAForeignOrDamagedFile() throws Exception {
    assertThat(enqueue("n1", "{\"a\":1}").exit()).isZero();
    Path file = dir.resolve("client.mv.db");
    String before = sha256(file);
    List<String> listing = listing();
    for (String[] args : List.of(new String[] {"status", "--db", db},
        new String[] {"list", "--db", db, "--status", "queued"},
        new String[] {"export", "--db", db})) {
      ToolRun r = run(args);
      assertThat(r.exit()).as("%s: %s", args[0], r.err()).isZero();
      assertThat(sha256(file)).as("%s changed the file", args[0]).isEqualTo(before);
      assertThat(listing()).as("%s left a file behind", args[0]).isEqualTo(listing);
    }

    Path other = dir.resolve("other-app");
    try (H2Database app = H2Database.open(other);
        java.sql.Connection c = app.dataSource().getConnection();
        java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE TABLE note (id INT PRIMARY KEY)");
    }
    String otherBefore = sha256(dir.resolve("other-app.mv.db"));
    for (String[] args : List.of(new String[] {"status", "--db", other.toString()},
        new String[] {"list", "--db", other.toString(), "--status", "queued"},
        new String[] {"export", "--db", other.toString()},
        new String[] {"requeue", "--db", other.toString(), "--id",
            "01a232a9-9236-76fa-a7df-440e95c08c08"},
        new String[] {"replay", "--db", other.toString(), "--url", server.baseUrl()},
        new String[] {"enqueue", "--db", other.toString(), "--operation", "note.put",
            "--entity", "a", "--payload", "{}"})) {
      ToolRun r = run(args);
      assertThat(r.exit()).as("%s on another application's file: %s", args[0], r.err())
          .isEqualTo(2);
      assertThat(r.err()).contains("holds no outbox").doesNotContain("\tat ");
      assertThat(sha256(dir.resolve("other-app.mv.db"))).as("%s wrote to it", args[0])
          .isEqualTo(otherBefore);
    }

    byte[] damaged = Files.readAllBytes(file);
    java.util.Arrays.fill(damaged, damaged.length - 8192, damaged.length, (byte) 0);
    Path broken = Files.write(dir.resolve("broken.mv.db"), damaged);
    String brokenBefore = sha256(broken);
    Path empty = Files.write(dir.resolve("empty.mv.db"), new byte[0]);
    for (Path bad : List.of(broken, empty)) {
      for (String command : List.of("status", "replay")) {
        ToolRun r = command.equals("status") ? run("status", "--db", bad.toString())
            : run("replay", "--db", bad.toString(), "--url", server.baseUrl());
        assertThat(r.exit()).as("%s on %s: %s", command, bad, r.err()).isEqualTo(2);
        assertThat(r.err()).contains(bad.toString()).doesNotContain("\tat ");
      }
    }
    assertThat(sha256(broken)).isEqualTo(brokenBefore);
    assertThat(Files.size(empty)).isZero();
  }

  private List<String> listing() throws Exception {
    try (java.util.stream.Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static String sha256(Path file) throws Exception {
    return java.util.HexFormat.of().formatHex(java.security.MessageDigest
        .getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  @Test
  void badInputGetsAClearMessageAndANonZeroExit() throws Exception {
    ToolRun missing = run("status", "--db", dir.resolve("nope").toString());
    assertThat(missing.exit()).isEqualTo(2);
    assertThat(missing.err()).contains("no outbox database at");
    assertThat(dir.resolve("nope.mv.db")).doesNotExist();
    enqueue("n1", "{}");
    ToolRun badStatus = run("list", "--db", db, "--status", "done");
    assertThat(badStatus.exit()).isEqualTo(2);
    assertThat(badStatus.err()).contains("unknown status 'done'").contains("retryable_failed");
    ToolRun badJson = enqueue("n2", "{oops");
    assertThat(badJson.exit()).isEqualTo(2);
    assertThat(badJson.err()).contains("not valid JSON");
    ToolRun badDuration = run("replay", "--db", db, "--url", server.baseUrl(), "--timeout", "soon");
    assertThat(badDuration.exit()).isEqualTo(2);
    assertThat(badDuration.err()).contains("not a duration");
    assertThat(count("queued")).isEqualTo(1);
  }

  @Test
  void replayUntilDrainedAcksEverythingAndPrintsCountsPerStatus() throws Exception {
    for (int i = 0; i < 5; i++) {
      enqueue("n" + (i % 2), "{\"entity\":\"n" + (i % 2) + "\",\"seq\":" + i + "}");
    }
    ToolRun r = run("replay", "--db", db, "--url", server.baseUrl(), "--until-drained",
        "--timeout", "60s", "--concurrency", "2");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode counts = r.lastJson();
    assertThat(counts.path("acked").asLong()).isEqualTo(5);
    for (String status : List.of("queued", "claimed", "sending", "retryable_failed", "unknown",
        "acked", "conflict", "rejected")) {
      assertThat(counts.has(status)).as(status).isTrue();
    }
    assertThat(counts.path("endedDuringRun").path("rejected").asLong()).isZero();
    assertThat(r.err()).contains("replay: 5 acked");
  }

  @Test
  void replayThatRunsOutOfTimeWithWorkLeftExitsThree() throws Exception {
    enqueue("n1", "{\"entity\":\"n1\",\"seq\":1}");
    faults.set(request -> FaultPlan.Fault.fail(503, Duration.ofSeconds(30)));
    ToolRun r = run("replay", "--db", db, "--url", server.baseUrl(), "--until-drained",
        "--timeout", "1s");
    assertThat(r.exit()).isEqualTo(3);
    // sent and refused, or (on a slow machine) not sent yet: either way open when time ran out
    assertThat(r.lastJson().path("retryable_failed").asLong()
        + r.lastJson().path("queued").asLong()).isEqualTo(1);
  }

  @Test
  void anUnreachableUrlIsReportedAndNothingChanges() throws Exception {
    enqueue("n1", "{\"entity\":\"n1\",\"seq\":1}");
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    ToolRun r = run("replay", "--db", db, "--url", "http://127.0.0.1:" + closed,
        "--timeout", "2s");
    assertThat(r.exit()).isEqualTo(4);
    assertThat(r.err()).contains("cannot reach").contains("nothing was sent");
    assertThat(r.lastJson().path("queued").asLong()).as("the final JSON object, always")
        .isEqualTo(1);
    assertThat(count("queued")).isEqualTo(1);
  }

  @Test
  void aRejectedCommandCanBeListedRequeuedAndExportedWithItsAuditTrail() throws Exception {
    enqueue("n1", "{\"entity\":\"n1\",\"reject\":\"invalid\",\"seq\":1}");
    ToolRun replayed = run("replay", "--db", db, "--url", server.baseUrl());
    assertThat(replayed.exit()).as("a command ended rejected during the run").isEqualTo(5);
    assertThat(replayed.lastJson().path("endedDuringRun").path("rejected").asLong())
        .isEqualTo(1);
    ToolRun listed = run("list", "--db", db, "--status", "rejected", "--json");
    JsonNode rejected = listed.lastJson();
    assertThat(rejected.path("lastError").path("code").asText()).isEqualTo("http_400");
    assertThat(rejected.path("reason").asText()).isEqualTo("rejected_by_receiver");
    String id = rejected.path("commandId").asText();
    JsonNode statusWithRejected = run("status", "--db", db, "--json").lastJson();
    assertThat(statusWithRejected.path("poison").asLong()).as("http_400 is not poison").isZero();
    assertThat(statusWithRejected.path("oldestPendingAgeSeconds").asLong()).isZero();
    ToolRun requeued = run("requeue", "--db", db, "--id", id);
    assertThat(requeued.exit()).as(requeued.err()).isZero();
    assertThat(count("queued")).isEqualTo(1);
    ToolRun again = run("requeue", "--db", db, "--id", id);
    assertThat(again.exit()).isEqualTo(2);
    assertThat(again.err()).contains("only conflict or rejected");
    ToolRun export = run("export", "--db", db);
    JsonNode line = export.lastJson();
    assertThat(line.path("commandId").asText()).isEqualTo(id);
    assertThat(line.path("audit").toString()).contains("operator_requeue")
        .contains("rejected_by_receiver");
  }

  @Test
  void requeueRefusesACommandWhoseEntityAlreadyHasALaterAckedCommandUnlessForced()
      throws Exception {
    String first = enqueue("n1", "{\"entity\":\"n1\",\"reject\":\"invalid\",\"seq\":1}")
        .lastJson().path("commandId").asText();
    assertThat(run("replay", "--db", db, "--url", server.baseUrl()).exit()).isEqualTo(5);
    enqueue("n1", "{\"entity\":\"n1\",\"seq\":2}");
    assertThat(run("replay", "--db", db, "--url", server.baseUrl()).exit()).isZero();
    ToolRun refused = run("requeue", "--db", db, "--id", first);
    assertThat(refused.exit()).isEqualTo(6);
    assertThat(refused.err()).contains("already acked").contains("--force");
    assertThat(count("rejected")).as("nothing changed").isEqualTo(1);
    ToolRun forced = run("requeue", "--db", db, "--id", first, "--force");
    assertThat(forced.exit()).as(forced.err()).isZero();
    assertThat(count("queued")).isEqualTo(1);
  }

  @Test
  void aPasswordInTheUrlIsNeverPrinted() throws Exception {
    enqueue("n1", "{\"entity\":\"n1\",\"seq\":1}");
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    ToolRun unreachable = run("replay", "--db", db, "--url",
        "http://user:s3cret@127.0.0.1:" + closed, "--timeout", "2s");
    assertThat(unreachable.exit()).isEqualTo(4);
    ToolRun malformed = run("replay", "--db", db, "--url", "htp://user:s3cret@127.0.0.1:1");
    assertThat(malformed.exit()).isEqualTo(2);
    for (ToolRun r : List.of(unreachable, malformed)) {
      assertThat(r.err() + r.out()).doesNotContain("s3cret");
    }
  }

  @Test
  void replayCanBeToldTheReceiverHasNoReconciliationAndHowToClassifyAStatus() throws Exception {
    enqueue("n1", "{\"entity\":\"n1\",\"seq\":1}");
    ToolRun badRule =
        run("replay", "--db", db, "--url", server.baseUrl(), "--classify", "409=maybe");
    assertThat(badRule.exit()).isEqualTo(2);
    assertThat(badRule.err()).contains("unknown kind 'maybe'");
    ToolRun r = run("replay", "--db", db, "--url", server.baseUrl(), "--no-reconciliation",
        "--classify", "409=in_progress", "--until-drained", "--timeout", "30s");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.lastJson().path("acked").asLong()).isEqualTo(1);
  }
}
