package dev.outboxreplay.examples.cli;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.sqlite.SqliteDatabase;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * The embedded engines the tool opens, and which one a file is: told from its first bytes
 * (SQLite's {@code SQLite format 3}, H2's store header {@code H:2,}), else from its name.
 */
enum OutboxEngine {
  H2(".mv.db"),
  SQLITE(".sqlite");

  private static final byte[] SQLITE_MAGIC =
      "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] H2_MAGIC = "H:2,".getBytes(StandardCharsets.US_ASCII);

  final String suffix;

  OutboxEngine(String suffix) {
    this.suffix = suffix;
  }

  /** {@code h2} or {@code sqlite}, as {@code --engine} takes it. */
  static OutboxEngine named(String name) {
    try {
      return valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--engine is h2 or sqlite: '" + name + "'");
    }
  }

  /**
   * The file {@code --db} names: itself when it ends with an engine's suffix; else the one
   * existing file among {@code DB.mv.db} and {@code DB.sqlite}; else (no file yet) the one of
   * {@code whenMissing}.
   */
  static Path fileOf(Path db, OutboxEngine whenMissing) {
    String name = db.getFileName().toString();
    for (OutboxEngine e : values()) {
      if (name.endsWith(e.suffix)) {
        return db;
      }
    }
    Path h2 = db.resolveSibling(name + H2.suffix);
    Path sqlite = db.resolveSibling(name + SQLITE.suffix);
    if (Files.exists(h2) && Files.exists(sqlite)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "both " + h2 + " and " + sqlite + " exist: give "
          + "--db the file itself");
    }
    return Files.exists(sqlite) ? sqlite : Files.exists(h2) ? h2
        : db.resolveSibling(name + whenMissing.suffix);
  }

  /** The engine of {@code file}: from its first bytes, else from its name. */
  static OutboxEngine of(Path file) {
    OutboxEngine byContent = fromHead(head(file));
    return byContent != null ? byContent
        : file.getFileName().toString().endsWith(SQLITE.suffix) ? SQLITE : H2;
  }

  /** The engine whose file starts with {@code head}, or null when neither's does. */
  static OutboxEngine fromHead(byte[] head) {
    if (head.length >= SQLITE_MAGIC.length
        && Arrays.equals(Arrays.copyOf(head, SQLITE_MAGIC.length), SQLITE_MAGIC)) {
      return SQLITE;
    }
    if (head.length >= H2_MAGIC.length
        && Arrays.equals(Arrays.copyOf(head, H2_MAGIC.length), H2_MAGIC)) {
      return H2;
    }
    return null;
  }

  /** Up to the first 16 bytes of {@code file}; none when it is missing or unreadable. */
  static byte[] head(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      return in.readNBytes(16);
    } catch (IOException e) {
      return new byte[0]; // missing or unreadable: its name says, and the open reports it
    }
  }

  /**
   * Opens {@code file}: read-only or for writing, never creating it unless {@code create}; an
   * H2 file with {@code key} when it is encrypted (null: plain).
   */
  JdbcDatabase open(Path file, boolean readOnly, boolean create, Duration wait, char[] key) {
    if (this == SQLITE) {
      if (key != null) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--key-file: " + file + " is a SQLite file, which "
            + "the library does not encrypt");
      }
      return SqliteDatabase.builder().file(file).readOnly(readOnly).createIfMissing(create)
          .busyTimeout(wait).build();
    }
    H2Database.Builder builder = H2Database.builder().file(file).readOnly(readOnly)
        .createIfMissing(create).openWait(wait);
    if (key != null) {
      try {
        builder.encryptionKey(key);
      } catch (IllegalArgumentException e) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--key-file: the key holds whitespace; H2 takes a "
            + "key without spaces");
      }
    }
    return builder.build();
  }

}
