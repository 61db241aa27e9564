package dev.outboxreplay.examples.notes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.server.HandlerResponse;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.ServerRequest;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.LoopbackRelay;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sample desktop app, headless, in a child JVM driven line by line as a user would click,
 * against the reference receiver behind a loopback relay that the test cuts and restores: edits
 * made offline and signed out, a SIGKILL while the receiver commits a request whose answer then
 * never arrives, a restart; conflict and rejected edits shown and retried; a window close that
 * never waits for a request in flight.
 */
class NotesAppTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private H2Database serverDb;
  private IdempotentServer server;
  private LoopbackRelay network;
  private final List<ChildJvm> apps = new ArrayList<>();
  private volatile String holdBody = "";
  private volatile boolean failing;
  private final CountDownLatch held = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void startReceiver() throws Exception {
    serverDb = H2Database.open(dir.resolve("server"));
    try (Connection c = serverDb.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE applied (arrival IDENTITY PRIMARY KEY, tenant VARCHAR, "
          + "key_value VARCHAR, note VARCHAR, body VARCHAR)");
    }
    server = IdempotentServer.builder().database(serverDb)
        .handler("note.put", (Connection tx, ServerRequest request) -> apply(tx, request))
        .start();
    network = new LoopbackRelay(server.port());
  }

  /** The receiver's business effect, in the same transaction as its idempotency record. */
  private HandlerResponse apply(Connection tx, ServerRequest request) throws Exception {
    JsonNode note = JSON.readTree(request.body());
    String body = note.path("body").asText();
    if (body.equals("CONFLICT")) {
      return HandlerResponse.json(409, "{\"type\":\"business_conflict\"}");
    }
    if (body.startsWith("FAIL") && failing) {
      throw new IllegalStateException("downstream unavailable");
    }
    try (PreparedStatement ps = tx.prepareStatement(
        "INSERT INTO applied (tenant, key_value, note, body) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, request.tenant());
      ps.setString(2, request.idempotencyKey());
      ps.setString(3, note.path("id").asText());
      ps.setString(4, body);
      ps.executeUpdate();
    }
    if (body.equals(holdBody)) {
      held.countDown();                  // the effect is written, not yet committed
      assertThat(release.await(2, TimeUnit.MINUTES)).isTrue();
    }
    return HandlerResponse.json(201, "{\"applied\":true}");
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    for (ChildJvm app : apps) {
      app.close();
    }
    network.close();
    server.close();
    serverDb.close();
  }

  @Test
  void editsMadeOfflineAndSignedOutSurviveAKillMidRequestAndAreEachAppliedOnce()
      throws Exception {
    Path file = dir.resolve("notes");
    App app = start(file);
    app.awaitStatus("Signed out: 0 changes waiting"::equals);
    app.press("sign-in alice token-1");
    app.awaitStatus("All changes synced"::equals);

    network.down();
    app.awaitStatus(s -> s.startsWith("Offline"));
    for (int i = 1; i <= 10; i++) {
      app.press("save note-" + i + " edit-" + i);
    }
    app.press("save note-1 edit-1b");                       // a second edit of one note
    app.awaitStatus("Offline: 11 changes waiting"::equals);
    app.press("sign-out");
    app.awaitStatus("Signed out: 11 changes waiting"::equals);
    network.up();
    app.awaitPress("health", "open=11 attention=0 paused=session_revoked"::equals);
    assertThat(applied()).as("nothing sent while offline, nor once online but signed out")
        .isEmpty();
    holdBody = "edit-7";
    app.press("sign-in alice token-2");
    assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS))
        .as("the receiver is processing edit-7").isTrue();
    app.child.kill();                                       // SIGKILL, mid-request
    release.countDown();                                    // it commits; the answer is lost
    awaitApplied(rows -> rows.contains("note-7 edit-7"));

    App restarted = start(file);
    restarted.press("sign-in alice token-3");
    restarted.awaitStatus("All changes synced"::equals);

    List<String> applied = applied();
    assertThat(applied).as("each edit applied exactly once")
        .containsExactlyInAnyOrder("note-1 edit-1", "note-1 edit-1b", "note-2 edit-2",
            "note-3 edit-3", "note-4 edit-4", "note-5 edit-5", "note-6 edit-6", "note-7 edit-7",
            "note-8 edit-8", "note-9 edit-9", "note-10 edit-10");
    assertThat(applied.indexOf("note-1 edit-1")).as("one note's edits in the order made")
        .isLessThan(applied.indexOf("note-1 edit-1b"));
    assertThat(restarted.press("notes")).contains("note-1 synced edit-1b", "note-7 synced edit-7")
        .doesNotContain("pending");
    assertThat(restarted.press("problems")).isEqualTo("[]");
  }

  @Test
  void anEditFromAnotherDeviceDeliveredAgainAfterAKillIsTakenInOnce() throws Exception {
    Path file = dir.resolve("notes");
    App app = start(file);
    assertThat(app.press("receive phone msg-1 note-9 from the phone")).isEqualTo("CONSUMED");
    app.child.kill();
    App restarted = start(file);
    assertThat(restarted.press("receive phone msg-1 note-9 from the phone"))
        .isEqualTo("DUPLICATE");
    assertThat(restarted.press("receive phone msg-2 note-9 again")).isEqualTo("CONSUMED");
    assertThat(restarted.press("notes")).isEqualTo("[note-9 synced again]");
    try (SqliteDatabase db = SqliteDatabase.open(file);
        Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT seen FROM device WHERE id = 'phone'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getInt(1)).as("the irreversible step ran once per message").isEqualTo(2);
    }
  }

  @Test
  void conflictAndRejectedEditsAreShownKeptAcrossARestartAndRetried() throws Exception {
    Path file = dir.resolve("notes");
    App app = start(file);
    app.press("sign-in alice token-1");
    app.press("save note-c CONFLICT");
    app.awaitStatus("All changes synced · 1 needs attention"::equals);
    assertThat(app.press("problems"))
        .isEqualTo("[note-c: note-c was changed elsewhere; your text is kept here]");

    failing = true;
    app.press("save note-f FAIL-1");
    app.awaitStatus("All changes synced · 2 need attention"::equals);  // 3 attempts, then poison
    assertThat(app.press("problems")).contains("note-f: note-f could not be sent");
    assertThat(applied()).isEmpty();

    app.child.kill();
    App restarted = start(file);
    assertThat(restarted.press("problems")).as("problems shown again after a restart")
        .contains("note-c: note-c was changed elsewhere", "note-f: note-f could not be sent");
    restarted.press("sign-in alice token-2");
    failing = false;                                        // the receiver is fixed
    assertThat(restarted.press("retry note-f")).isEqualTo("queued");
    restarted.awaitStatus("All changes synced · 1 needs attention"::equals);
    assertThat(applied()).containsExactly("note-f FAIL-1");
    assertThat(restarted.press("retry note-x")).startsWith("error no problem shown for note-x");
  }

  @Test
  void closingTheWindowReturnsWhileARequestIsInFlightAndFinishesItAfterwards()
      throws Exception {
    App app = start(dir.resolve("notes"));
    app.press("sign-in alice token-1");
    holdBody = "slow";
    app.press("save note-s slow");
    assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

    app.child.send("quit");
    app.awaitLine("closing"::equals);
    app.awaitLine("ui responsive"::equals);                 // while the request still hangs
    assertThat(applied()).as("the request was still in flight: its effect not committed")
        .isEmpty();
    release.countDown();
    app.awaitLine("closed"::equals);
    assertThat(app.child.waitForExit(WAIT)).isZero();

    App restarted = start(dir.resolve("notes"));
    assertThat(restarted.press("notes")).isEqualTo("[note-s synced slow]");
    assertThat(applied()).containsExactly("note-s slow");
  }

  private App start(Path file) throws Exception {
    ChildJvm child = ChildJvm.start(NotesAppMain.class,
        dir.resolve("app-" + apps.size() + ".err"), file.toString(), network.baseUrl(),
        "PT0.1S", "3", "PT2S");
    apps.add(child);
    App app = new App(child);
    app.awaitLine("ready"::equals);
    return app;
  }

  private List<String> applied() throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = serverDb.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT note, body FROM applied ORDER BY arrival")) {
      while (rs.next()) {
        rows.add(rs.getString(1) + " " + rs.getString(2));
      }
    }
    return rows;
  }

  private void awaitApplied(Predicate<List<String>> condition) {
    Awaitility.await("the receiver's commit").atMost(WAIT).pollInterval(Duration.ofMillis(20))
        .until(this::applied, condition);
  }

  /** The child app: presses answered by {@code ok}/{@code error}, status lines between them. */
  private static final class App {
    final ChildJvm child;
    String status = "";

    App(ChildJvm child) {
      this.child = child;
    }

    String press(String line) throws Exception {
      child.send(line);
      String answer = awaitLine(l -> l.startsWith("ok ") || l.startsWith("error "));
      return answer.startsWith("ok ") ? answer.substring(3) : answer;
    }

    /** Presses {@code line} until its answer matches, as a user reading a label would. */
    void awaitPress(String line, Predicate<String> condition) {
      Awaitility.await("'" + line + "' answering as expected").atMost(WAIT)
          .pollInterval(Duration.ofMillis(20)).until(() -> press(line), condition);
    }

    void awaitStatus(Predicate<String> condition) throws Exception {
      while (!condition.test(status)) {
        readOne();
      }
    }

    /** Reads lines until one matches; status lines update {@link #status} on the way. */
    String awaitLine(Predicate<String> condition) throws Exception {
      while (true) {
        String line = readOne();
        if (condition.test(line)) {
          return line;
        }
      }
    }

    private String readOne() throws Exception {
      String line = child.nextLine(WAIT);
      if (line.startsWith("status: ")) {
        status = line.substring("status: ".length());
      }
      return line;
    }
  }
}
