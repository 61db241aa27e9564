package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.LockOwner;
import dev.outboxreplay.testkit.ChildJvm;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lock file whose owner is gone locks no one out (invariant 16): a read-only open reads past it
 * without writing anything, a writable open takes it over; a lock whose owner runs is still
 * respected, and the error names that owner as live. The stale lock is the one a {@code replay}
 * SIGKILLed in the field left ({@code files/stale-socket-lock.lock.db}).
 */
class StaleLockTest {
  @TempDir Path dir;

  @Test
  void aLockLeftByAKilledProcessIsJudgedGoneAndAReadOnlyOpenReadsPastItWritingNothing()
      throws Exception {
    Path base = dir.resolve("app");
    accept(base, 3);
    Path lock = copyStaleLock(base);
    assertThat(LockOwner.of(dir.resolve("app.mv.db")).state()).isEqualTo(LockOwner.State.GONE);
    String dataBefore = sha256(dir.resolve("app.mv.db"));
    String lockBefore = sha256(lock);
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.openExisting(db).countByStatus()).containsEntry(Status.QUEUED, 3L);
    }
    assertThat(sha256(dir.resolve("app.mv.db"))).as("nothing written").isEqualTo(dataBefore);
    assertThat(sha256(lock)).as("the stale lock is left for a writer").isEqualTo(lockBefore);
  }

  @Test
  void aWritableOpenTakesTheStaleLockOver() throws Exception {
    Path base = dir.resolve("app");
    accept(base, 1);
    copyStaleLock(base);
    accept(base, 1);
    try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
      assertThat(H2OutboxStore.openExisting(db).countByStatus()).containsEntry(Status.QUEUED, 2L);
    }
  }

  @Test
  void aLockWhoseOwnerRunsIsHeldUntilTheOwnerIsKilled() throws Exception {
    Path base = dir.resolve("shared");
    try (ChildJvm server = ServeFileChild.serving(base, dir.resolve("server.err"))) {
      LockOwner.Found owner = LockOwner.of(dir.resolve("shared.mv.db"));
      assertThat(owner.state()).isEqualTo(LockOwner.State.HELD);
      try (H2Database db = H2Database.builder().file(base).readOnly(true).build()) {
        assertThat(H2OutboxStore.openExisting(db).countByStatus().get(Status.QUEUED)).isZero();
      }
      server.kill();
      assertThat(dir.resolve("shared.lock.db")).as("SIGKILL leaves the lock file").exists();
      assertThat(LockOwner.of(dir.resolve("shared.mv.db")).state())
          .isEqualTo(LockOwner.State.GONE);
    }
  }

  @Test
  void aProcessHoldingTheFileWithoutSharingItIsNamedAsLive() throws Exception {
    Path base = dir.resolve("held");
    try (ChildJvm holder = ChildJvm.start(HoldDatabaseOpenChild.class,
        dir.resolve("holder.err"), base.toString())) {
      assertThat(holder.nextLine(Duration.ofSeconds(60))).isEqualTo("READY");
      assertThat(LockOwner.of(dir.resolve("held.mv.db")).state())
          .isEqualTo(LockOwner.State.HELD);
      assertThatThrownBy(() -> H2Database.builder().file(base).readOnly(true)
          .openWait(Duration.ZERO).build())
          .isInstanceOf(OutboxStorageException.class)
          .hasMessageContaining("locked by another process: a live process has it open");
    }
  }

  @Test
  void aLockFileWithoutAPortCountsAsGoneOnlyOnceItStoodUnchanged() throws Exception {
    Path base = dir.resolve("app");
    accept(base, 1);
    Path lock = dir.resolve("app.lock.db");
    Files.writeString(lock, "#FileLock\nmethod=file\nid=1a2b\n");
    Instant now = Instant.now();
    Files.setLastModifiedTime(lock, FileTime.from(now));
    assertThat(LockOwner.of(dir.resolve("app.mv.db")).state()).as("an opener may be writing it")
        .isEqualTo(LockOwner.State.HELD);
    Files.setLastModifiedTime(lock, FileTime.from(now.minusSeconds(3)));
    assertThat(LockOwner.of(dir.resolve("app.mv.db")).state()).isEqualTo(LockOwner.State.GONE);
  }

  @Test
  void aLockNamingAnAddressOffLoopbackIsNeverProbedAndCountsAsHeld() throws Exception {
    Path base = dir.resolve("app");
    accept(base, 1);
    Files.writeString(dir.resolve("app.lock.db"),
        "#FileLock\nmethod=socket\nipAddress=192.0.2.7\nport=40159\nid=1a2b\n");
    LockOwner.Found owner = LockOwner.of(dir.resolve("app.mv.db"));
    assertThat(owner.state()).isEqualTo(LockOwner.State.HELD);
    assertThat(owner.description()).contains("not on loopback");
  }

  private static void accept(Path base, int commands) {
    try (H2Database db = H2Database.open(base)) {
      Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
      for (int i = 0; i < commands; i++) {
        outbox.accept(OutboxCommand.of("note.put", "n", Map.of("i", i)));
      }
    }
  }

  /** The field's stale lock, as {@code base}'s lock file. */
  private static Path copyStaleLock(Path base) throws Exception {
    Path lock = base.resolveSibling(base.getFileName() + ".lock.db");
    try (InputStream in = StaleLockTest.class.getResourceAsStream(
        "/files/stale-socket-lock.lock.db")) {
      Files.copy(in, lock, StandardCopyOption.REPLACE_EXISTING);
    }
    return lock;
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
