package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Child process: opens a database in multi-process mode first, so it serves the file to the
 * others, says READY, and holds it until killed, or until stdin says {@code close} or ends: then
 * it closes the database and exits normally, as an app that quits does. After {@code
 * close-and-stay} it closes the database, says CLOSED and keeps running until stdin says {@code
 * exit} or ends, as an app that closes one file and goes on does. An optional second argument is
 * the file's encryption key.
 */
public final class ServeFileChild {
  private ServeFileChild() {}

  /**
   * Starts this child on {@code file} (with its encryption key, if given) and returns it once it
   * said READY, so it serves the file to this process; its stderr goes to {@code stderr}. The
   * child is closed when it does not get there within a minute.
   */
  static ChildJvm serving(Path file, Path stderr, String... encryptionKey) throws Exception {
    List<String> args = new ArrayList<>(List.of(file.toString()));
    args.addAll(List.of(encryptionKey));
    ChildJvm child = ChildJvm.start(ServeFileChild.class, stderr, args.toArray(String[]::new));
    try {
      assertThat(child.nextLine(Duration.ofSeconds(60))).as(child.stderrText())
          .isEqualTo("READY");
      return child;
    } catch (AssertionError | Exception e) {
      child.close();
      throw e;
    }
  }

  public static void main(String[] args) throws Exception {
    H2Database.Builder builder = H2Database.builder().file(Path.of(args[0]));
    if (args.length > 1) {
      builder.encryptionKey(args[1].toCharArray());
    }
    try (H2Database db = builder.build()) {
      H2OutboxStore.create(db);
      H2InboxStore.create(db);
      System.out.println("READY");
      System.out.flush();
      BufferedReader in = new BufferedReader(
          new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line = in.readLine();
      while (line != null && !line.equals("close") && !line.equals("close-and-stay")) {
        line = in.readLine(); // hold the file open
      }
      db.close();
      System.out.println("CLOSED");
      System.out.flush();
      if ("close-and-stay".equals(line)) {
        while (line != null && !line.equals("exit")) {
          line = in.readLine();
        }
      }
    }
  }
}
