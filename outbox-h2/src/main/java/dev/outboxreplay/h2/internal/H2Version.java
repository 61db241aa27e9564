package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The H2 version the library was built and tested with, against the one on the class path. The
 * repairs after a kill and a clean close read H2 2.5's file layout, and nothing warned when
 * another H2 ran them: with 2.3.232 on the class path (what a Spring Boot parent manages) the
 * library opened files with no complaint. Now it refuses, naming both versions.
 */
public final class H2Version {
  /** The version from the build ({@code built-with.properties}); null when it cannot be read. */
  public static final String BUILT_WITH = builtWith();

  private H2Version() {}

  /**
   * @throws OutboxStorageException (not retryable) naming {@code file} and both versions when the
   *     H2 on the class path is not the one the library was built with
   */
  public static void require(Path file) {
    require(file, org.h2.engine.Constants.VERSION);
  }

  static void require(Path file, String running) {
    if (BUILT_WITH == null || BUILT_WITH.equals(running)) {
      return;
    }
    throw new OutboxStorageException("cannot open " + file + ": H2 " + running + " is on the "
        + "class path, but this library was built and tested with H2 " + BUILT_WITH + " (its "
        + "repairs of a file after a kill read that version's layout); depend on "
        + "com.h2database:h2:" + BUILT_WITH + ", for example by importing "
        + "dev.outboxreplay:outbox-bom before any other BOM that manages H2");
  }

  private static String builtWith() {
    try (InputStream in = H2Version.class.getResourceAsStream(
        "/dev/outboxreplay/h2/built-with.properties")) {
      if (in == null) {
        return null;
      }
      Properties p = new Properties();
      p.load(in);
      String version = p.getProperty("h2.version");
      return version == null || version.startsWith("$") ? null : version;
    } catch (IOException e) {
      return null;
    }
  }
}
