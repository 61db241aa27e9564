package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code outbox backup} and {@code outbox restore} on both engines, with the app holding the
 * file in another process: an online backup, and a restore refused whenever the receiver may
 * have applied more than the backup knows (commands it would forget, answered commands it would
 * send again, or no file to compare with), allowed with {@code --force} and keeping the file it
 * replaced.
 */
class BackupRestoreTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void aBackupTakenWhileTheAppRunsIsRestoredOnlyWhenNothingLaterWouldBeForgotten(String engine)
      throws Exception {
    Path db = dir.resolve("app");
    Path backup = dir.resolve("app.backup");
    try (ChildJvm app = ChildJvm.start(OpenOutboxChild.class, dir.resolve("app.err"), engine,
        db.toString())) {
      assertThat(app.nextLine(WAIT)).isEqualTo("READY");
      app.send("accept 3");
      assertThat(app.nextLine(WAIT)).isEqualTo("accepted 3");

      ToolRun made = ToolRun.of("backup", "--db", db.toString(), "--to", backup.toString());
      assertThat(made.exit()).as(made.err()).isZero();
      assertThat(made.lastJson().get("commands").asInt()).isEqualTo(3);
      assertThat(made.lastJson().get("engine").asText()).isEqualTo(engine);
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(backup)))
          .isEqualTo("rw-------");
      assertThat(ToolRun.of("backup", "--db", db.toString(), "--to", backup.toString()).exit())
          .as("never overwrites").isEqualTo(2);

      app.send("accept 2");
      assertThat(app.nextLine(WAIT)).isEqualTo("accepted 5");
      ToolRun refused = ToolRun.of("restore", "--db", db.toString(), "--from",
          backup.toString());
      assertThat(refused.exit()).as(refused.err()).isEqualTo(6);
      assertThat(refused.err()).contains("not restored: the backup is older than",
          "2 command(s) accepted after it would be forgotten (0 of them may already have "
              + "taken effect", "--force restores it anyway");
      app.send("count");
      assertThat(app.nextLine(WAIT)).as("the app's file as it was").isEqualTo("count 5");
    }

    ToolRun forced = ToolRun.of("restore", "--db", db.toString(), "--from", backup.toString(),
        "--force");
    assertThat(forced.exit()).as(forced.err()).isZero();
    assertThat(forced.err()).contains("restoring with --force");
    assertThat(forced.lastJson().get("commands").asInt()).isEqualTo(3);
    assertThat(status(db.toString())).isEqualTo(3);
    Path kept = Path.of(forced.lastJson().get("previousKeptAt").asText());
    assertThat(status(kept.toString())).as("the replaced file, kept").isEqualTo(5);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(kept)))
        .isEqualTo("rw-------");
    assertThat(ToolRun.of("restore", "--db", db.toString(), "--from", backup.toString()).exit())
        .as("the file now holds exactly what the backup holds").isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void aBackupFromBeforeTheReceiverAnsweredIsRefusedAndNoFileMeansForce(String engine)
      throws Exception {
    Path db = dir.resolve("app");
    for (int i = 1; i <= 3; i++) {
      assertThat(ToolRun.of("enqueue", "--db", db.toString(), "--engine", engine,
          "--operation", "note.put", "--entity", "n-" + i,
          "--payload", "{\"entity\":\"n-" + i + "\",\"seq\":1}").exit()).isZero();
    }
    Path backup = dir.resolve("before-replay.backup");
    assertThat(ToolRun.of("backup", "--db", db.toString(), "--to", backup.toString()).exit())
        .isZero();
    try (H2Database serverDb = H2Database.open(dir.resolve("server"))) {
      NotesApplication notes = new NotesApplication(serverDb);
      try (IdempotentServer server = IdempotentServer.builder().database(serverDb)
          .handler(NotesApplication.OPERATION, notes.handler()).start()) {
        ToolRun replay = ToolRun.of("replay", "--db", db.toString(), "--url", server.baseUrl(),
            "--until-drained", "--timeout", "1m");
        assertThat(replay.exit()).as(replay.err()).isZero();
      }
      assertThat(notes.totalEffects()).isEqualTo(3);
    }
    Path file = Files.list(dir).filter(p -> p.getFileName().toString().matches("app\\.(mv\\.db|sqlite)"))
        .findFirst().orElseThrow();
    String before = sha256(file);

    ToolRun refused = ToolRun.of("restore", "--db", db.toString(), "--from", backup.toString());
    assertThat(refused.exit()).as(refused.err()).isEqualTo(6);
    assertThat(refused.err()).contains("3 command(s) the receiver has answered would be sent "
        + "again");
    assertThat(sha256(file)).as("a refused restore leaves the file as it was").isEqualTo(before);

    Path elsewhere = dir.resolve("new-machine").resolve("app");
    Files.createDirectories(elsewhere.getParent());
    ToolRun noFile = ToolRun.of("restore", "--db", elsewhere.toString(), "--from",
        backup.toString());
    assertThat(noFile.exit()).isEqualTo(6);
    assertThat(noFile.err()).contains("to compare it with");
    assertThat(ToolRun.of("restore", "--db", elsewhere.toString(), "--from", backup.toString(),
        "--force").exit()).isZero();
    assertThat(status(elsewhere.toString())).isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void aRestoreOverAFileAnAppHoldsIsRefusedOnH2AndDoneUnderSqlitesLocks(String engine)
      throws Exception {
    Path db = dir.resolve("app");
    Path backup = dir.resolve("app.backup");
    try (ChildJvm app = ChildJvm.start(OpenOutboxChild.class, dir.resolve("app.err"), engine,
        db.toString())) {
      assertThat(app.nextLine(WAIT)).isEqualTo("READY");
      app.send("accept 2");
      assertThat(app.nextLine(WAIT)).isEqualTo("accepted 2");
      assertThat(ToolRun.of("backup", "--db", db.toString(), "--to", backup.toString()).exit())
          .isZero();
      ToolRun restore = ToolRun.of("restore", "--db", db.toString(), "--from",
          backup.toString());
      if (engine.equals("h2")) {
        assertThat(restore.exit()).as(restore.err()).isEqualTo(2);
        assertThat(restore.err()).contains("is open in a running process");
      } else {
        assertThat(restore.exit()).as(restore.err()).isZero();
      }
      app.send("accept 1");
      assertThat(app.nextLine(WAIT)).as("the app goes on with its file").isEqualTo("accepted 3");
    }
    assertThat(status(db.toString())).isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "sqlite"})
  void whatIsNotABackupIsRefusedWithNothingChanged(String engine) throws Exception {
    Path db = dir.resolve("app");
    assertThat(ToolRun.of("enqueue", "--db", db.toString(), "--engine", engine, "--operation",
        "note.put", "--entity", "n-1", "--payload", "{}").exit()).isZero();
    Path notABackup = Files.writeString(dir.resolve("notes.txt"), "hello");
    ToolRun refused = ToolRun.of("restore", "--db", db.toString(), "--from",
        notABackup.toString());
    assertThat(refused.exit()).isEqualTo(2);
    assertThat(refused.err()).contains("is not a backup made by outbox backup");
    assertThat(ToolRun.of("restore", "--db", db.toString(), "--from",
        dir.resolve("missing").toString()).exit()).isEqualTo(2);
    assertThat(status(db.toString())).isEqualTo(1);
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .noneMatch(name -> name.startsWith(".outbox-staging-"));
    }
  }

  private static long status(String db) throws Exception {
    ToolRun status = ToolRun.of("status", "--db", db, "--json");
    assertThat(status.exit()).as(status.err()).isZero();
    long total = 0;
    var counts = status.lastJson().get("counts");
    for (var it = counts.elements(); it.hasNext(); ) {
      total += it.next().asLong();
    }
    return total;
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
        .digest(Files.readAllBytes(file)));
  }
}
