package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.outboxreplay.examples.cli.OutboxTool;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tool run as another local user who may read a file but not write it or its folder: reading
 * commands work (a stale lock included), writing ones refuse at once saying what is read-only,
 * and nothing is written. In the field a read-only folder gave "Another process was faster" after
 * 14.5 s and a read-only file an H2 feature error. Runs when the tests run as root with
 * {@code setpriv} (the child is {@code nobody}); skipped otherwise.
 */
class AnotherLocalUserTest {
  private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

  @TempDir Path dir;

  @Test
  void aUserWhoMayOnlyReadTheFileOrItsFolderReadsItAndIsToldWhyItCannotWrite()
      throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")) && Files.isExecutable(SETPRIV),
        "needs root and setpriv to run a child as another user");
    Path shared = Files.createDirectory(dir.resolve("shared"));
    open(dir, shared);
    String classPath = readableClassPath(shared);
    Path data = Files.createDirectory(shared.resolve("data"));
    open(data);
    String db = data.resolve("app").toString();
    assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity", "n",
        "--payload", "{}").exit()).isZero();
    Path file = data.resolve("app.mv.db");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    String before = sha256(file);

    Result status = asNobody(classPath, "status", "--db", db, "--json");
    assertThat(status.exit()).as(status.err()).isZero();
    assertThat(status.out()).contains("\"queued\":1");
    Result readOnlyFile = asNobody(classPath, "enqueue", "--db", db, "--operation", "note.put",
        "--entity", "n", "--payload", "{}");
    assertThat(readOnlyFile.exit()).isEqualTo(2);
    assertThat(readOnlyFile.err()).contains("the file is read-only for this user");

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
    Result readOnlyFolder = asNobody(classPath, "replay", "--db", db, "--url",
        "http://127.0.0.1:9", "--timeout", "1s");
    assertThat(readOnlyFolder.exit()).isEqualTo(2);
    assertThat(readOnlyFolder.err()).contains("may not create files in " + data);

    try (InputStream stale = getClass().getResourceAsStream("/files/stale-socket-lock.lock.db")) {
      Files.copy(stale, data.resolve("app.lock.db"));
    }
    Result pastStaleLock = asNobody(classPath, "status", "--db", db, "--json");
    assertThat(pastStaleLock.exit()).as(pastStaleLock.err()).isZero();
    assertThat(sha256(file)).as("nothing written").isEqualTo(before);
    try (Stream<Path> files = Files.list(data)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("app.mv.db", "app.lock.db");
    }
  }

  private record Result(int exit, String out, String err) {}

  private Result asNobody(String classPath, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(SETPRIV.toString(), "--reuid=nobody",
        "--regid=nogroup", "--clear-groups",
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", classPath, OutboxTool.class.getName()));
    command.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = new ProcessBuilder(command).redirectOutput(out.toFile())
        .redirectError(err.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("the tool as nobody did not end within 60 s");
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /** This JVM's class path, copied where {@code nobody} may read it. */
  private static String readableClassPath(Path into) throws IOException {
    List<String> entries = new ArrayList<>();
    int n = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path source = Path.of(entry);
      if (!Files.exists(source)) {
        continue;
      }
      Path target = into.resolve("cp-" + n++ + (Files.isDirectory(source) ? "" : ".jar"));
      copy(source, target);
      entries.add(target.toString());
    }
    return String.join(File.pathSeparator, entries);
  }

  private static void copy(Path source, Path target) throws IOException {
    if (!Files.isDirectory(source)) {
      Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r--r--"));
      return;
    }
    try (Stream<Path> tree = Files.walk(source)) {
      for (Path p : (Iterable<Path>) tree::iterator) {
        Path to = target.resolve(source.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(to);
          open(to);
        } else {
          Files.copy(p, to, StandardCopyOption.REPLACE_EXISTING);
          Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rw-r--r--"));
        }
      }
    }
  }

  /** Folders others may enter and list but not write. */
  private static void open(Path... folders) throws IOException {
    for (Path folder : folders) {
      Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
