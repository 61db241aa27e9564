package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.ListeningSockets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a user's machine: a process holding an outbox file listens on loopback only, other processes
 * still share the file, and what the library creates is owner-only.
 */
class LocalOnlyTest {
  static final Duration CHILD = Duration.ofSeconds(60);

  @TempDir Path dir;

  /**
   * A process started as users start theirs (no {@code -D} options; child JVMs get none) serves
   * its file on loopback only: the library itself asks H2 for loopback before H2 loads. This test
   * JVM has {@code h2.bindAddress} preset (the module's surefire setting), so the default is
   * checked in the child.
   */
  @Test
  void aProcessHoldingAFileForOtherProcessesListensOnLoopbackOnly() throws Exception {
    assumeTrue(ListeningSockets.available(), "needs Linux /proc");
    Path file = dir.resolve("app");
    try (ChildJvm serving = ServeFileChild.serving(file, dir.resolve("serving.err"))) {
      List<ListeningSockets.Listener> listeners = ListeningSockets.of(serving.pid());
      H2LockFile lock = H2LockFile.read(dir.resolve("app.lock.db"));
      assertThat(listeners).as("H2's server for other processes is among them")
          .anyMatch(l -> l.port() == lock.port());
      assertThat(listeners).as("every listening socket of the serving process")
          .allMatch(l -> l.address().isLoopbackAddress());
      assertThat(java.net.InetAddress.getByName(lock.host()).isLoopbackAddress())
          .as("other processes are told to connect to %s", lock.host()).isTrue();

      try (ChildJvm second = ChildJvm.start(OpenLoopbackChild.class,
          dir.resolve("second.err"), file.toString(), "second")) {
        assertThat(second.nextLine(CHILD)).as(second.stderrText()).isEqualTo("WROTE");
      }
      serving.send("close");
      assertThat(serving.nextLine(CHILD)).as(serving.stderrText()).isEqualTo("CLOSED");
    }
  }

  /**
   * What {@code H2Database.close()} documents for the serving process: even while another
   * process is connected through it, this process stops listening by the time close returns (the
   * file is closed for everyone); the other process goes on by itself and closes cleanly.
   */
  @Test
  void aClosedServingProcessStopsListeningWhileAnotherProcessIsConnected() throws Exception {
    assumeTrue(ListeningSockets.available(), "needs Linux /proc");
    Path file = dir.resolve("app");
    long pid = ProcessHandle.current().pid();
    H2Database db = H2Database.open(file);
    H2OutboxStore.create(db);
    List<ListeningSockets.Listener> serving;
    try (ChildJvm other = ServeFileChild.serving(file, dir.resolve("other.err"))) {
      // other tests in this JVM may listen too: look at this file's own sockets only
      int port = LockFilePort.of(dir.resolve("app.lock.db"));
      serving = ListeningSockets.of(pid).stream().filter(l -> l.port() == port).toList();
      assertThat(serving).as("this process serves the file").hasSize(1);
      db.close();
      assertThat(ListeningSockets.of(pid)).as("listening after close, with a process connected")
          .doesNotContainAnyElementsOf(serving);
      other.send("close");
      assertThat(other.nextLine(CHILD)).as(other.stderrText()).isEqualTo("CLOSED");
      assertThat(other.waitForExit(CHILD)).isZero();
    }
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
        .until(() -> !Files.exists(dir.resolve("app.lock.db")));
  }

  @Test
  void multiProcessModeIsRefusedWhenH2WasLoadedToListenOnEveryInterface() throws Exception {
    try (ChildJvm child = ChildJvm.start(OpenLoopbackChild.class, dir.resolve("child.err"),
        dir.resolve("app").toString(), "h2-first")) {
      String line = child.nextLine(CHILD);
      assertThat(line).as(child.stderrText()).startsWith("REFUSED")
          .contains("every network interface").contains("-Dh2.bindAddress=127.0.0.1")
          .contains("app.mv.db");
    }
    assertThat(dir.resolve("app.mv.db")).as("nothing created").doesNotExist();
  }

  @Test
  void createdFoldersAndFilesAreOwnerOnlyAndAnExistingFileKeepsItsPermissions()
      throws Exception {
    assumeTrue(Files.getFileStore(dir).supportsFileAttributeView("posix"), "needs POSIX");
    Path file = dir.resolve("new/nested/app");
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore.create(db);
      assertThat(perms(dir.resolve("new"))).isEqualTo("rwx------");
      assertThat(perms(dir.resolve("new/nested"))).isEqualTo("rwx------");
      assertThat(perms(dir.resolve("new/nested/app.mv.db"))).isEqualTo("rw-------");
      assertThat(perms(dir.resolve("new/nested/app.lock.db")))
          .as("holds the server's access key").isEqualTo("rw-------");
    }
    try (var files = Files.list(dir.resolve("new/nested"))) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .as("no trace file").noneMatch(n -> n.endsWith(".trace.db"));
    }
    Files.setPosixFilePermissions(dir.resolve("new/nested/app.mv.db"),
        PosixFilePermissions.fromString("rw-r-----"));
    try (H2Database db = H2Database.open(file)) {
      assertThat(perms(dir.resolve("new/nested/app.mv.db")))
          .as("the owner chose to share it with a group").isEqualTo("rw-r-----");
      assertThat(perms(dir.resolve("new/nested/app.lock.db"))).isEqualTo("rw-------");
    }
  }

  private static String perms(Path p) throws Exception {
    Set<PosixFilePermission> set = Files.getPosixFilePermissions(p);
    return PosixFilePermissions.toString(set);
  }
}
