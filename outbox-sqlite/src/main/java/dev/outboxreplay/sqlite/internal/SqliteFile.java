package dev.outboxreplay.sqlite.internal;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.internal.PrivateFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.sqlite.SQLiteConfig;

/**
 * Everything about a SQLite file before the pool opens it: where it is, whether it may be
 * opened (looked at read-only, its bytes unchanged when refused), and how a new one is made: under
 * a temporary name, owner-only, with its {@code application_id}, {@code auto_vacuum} and the
 * library's bookkeeping table, then linked into place in one step, so that a process killed while
 * it creates a file never leaves an empty or half-made one under the file's name.
 */
public final class SqliteFile {
  /** The name suffix of a database file given by its base path. */
  public static final String SUFFIX = ".sqlite";
  /** The first 16 bytes of every SQLite database. */
  private static final byte[] MAGIC = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);
  private static final int APPLICATION_ID_OFFSET = 68;

  /**
   * What the look found.
   *
   * @param fresh true when this open created the file
   * @param immutable true for a read-only open of a file in a folder it cannot write, with no
   *     {@code -wal} or {@code -shm} beside it: no process has it open, and SQLite reads it
   *     without the shared-memory file it could not create
   */
  public record Checked(boolean fresh, boolean immutable) {}

  private SqliteFile() {}

  /** The database file for {@code given}: itself when it ends with {@link #SUFFIX}. */
  public static Path dataFile(Path given) {
    Path absolute = given.toAbsolutePath().normalize();
    String name = absolute.getFileName() == null ? "" : absolute.getFileName().toString();
    if (name.isEmpty()) {
      throw new IllegalArgumentException("file has no name: " + given);
    }
    return name.endsWith(SUFFIX) ? absolute : absolute.resolveSibling(name + SUFFIX);
  }

  /**
   * Creates the file if it is missing and may be, or checks the existing one.
   *
   * @throws OutboxStorageException (not retryable) naming the file when it must not be opened
   */
  public static Checked check(Path file, boolean readOnly, boolean createIfMissing,
      long quickCheckLimit) {
    if (!Files.exists(file)) {
      if (readOnly || !createIfMissing) {
        throw new OutboxStorageException("no outbox database at " + file + " (it is not created "
            + "because " + (readOnly ? "it is opened read-only" : "createIfMissing is off") + ")");
      }
      if (create(file)) {
        return new Checked(true, false);
      }
    }
    if (!readOnly) {
      requireWritable(file);
    }
    verify(file);
    boolean immutable = readOnly && !Files.isWritable(file.getParent())
        && !Files.exists(sidecar(file, "-wal")) && !Files.exists(sidecar(file, "-shm"));
    quickCheck(file, immutable, quickCheckLimit);
    return new Checked(false, immutable);
  }

  /**
   * Makes a new database at {@code file}: false when another process made it first.
   */
  private static boolean create(Path file) {
    Path folder = file.getParent();
    Path making = folder.resolve("." + file.getFileName() + "."
        + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1) + ".creating");
    try {
      PrivateFiles.createParents(file);
      if (PrivateFiles.posix()) {
        Files.createFile(making, PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rw-------")));
      } else {
        Files.createFile(making);
      }
    } catch (IOException e) {
      throw new OutboxStorageException("cannot create " + file + ": " + e, e);
    }
    try {
      SQLiteConfig config = new SQLiteConfig();
      try (Connection c = config.createConnection("jdbc:sqlite:" + making);
          Statement s = c.createStatement()) {
        s.execute("PRAGMA auto_vacuum = INCREMENTAL"); // before the first table
        s.execute("PRAGMA application_id = " + dev.outboxreplay.sqlite.SqliteDatabase
            .APPLICATION_ID);
        s.execute(dev.outboxreplay.jdbc.internal.OutboxTables.HISTORY_DDL);
      }
      try {
        Files.createLink(file, making); // one step: the name holds the whole file or nothing
      } catch (FileAlreadyExistsException takenMeanwhile) {
        return false;
      } catch (UnsupportedOperationException | IOException noLinks) {
        Files.move(making, file); // refuses to replace a file another process made meanwhile
        return true;
      }
      return true;
    } catch (FileAlreadyExistsException takenMeanwhile) {
      return false;
    } catch (SQLException | IOException e) {
      throw new OutboxStorageException("cannot create " + file + ": " + e, e);
    } finally {
      try {
        Files.deleteIfExists(making);
      } catch (IOException ignored) {
        // a stray temporary file beside the database; the database is whole
      }
    }
  }

  /** Refuses a 0-byte file, one that is not SQLite, and another application's SQLite file. */
  private static void verify(Path file) {
    byte[] header = new byte[100];
    int read;
    try (InputStream in = Files.newInputStream(file)) {
      read = in.readNBytes(header, 0, header.length);
    } catch (NoSuchFileException e) {
      throw new OutboxStorageException("no outbox database at " + file, e);
    } catch (IOException e) {
      throw new OutboxStorageException("cannot read database file " + file + ": " + e, e);
    }
    if (read == 0) {
      throw new OutboxStorageException("cannot open database file " + file + ": it is empty (0 "
          + "bytes), so it is not a SQLite database; it was left untouched (move it away to "
          + "start a new one)");
    }
    if (read < header.length || !Arrays.equals(Arrays.copyOf(header, MAGIC.length), MAGIC)) {
      throw new OutboxStorageException("cannot open database file " + file + ": it is not a "
          + "SQLite database (its first bytes are not SQLite's); it was left untouched");
    }
    int applicationId = ByteBuffer.wrap(header, APPLICATION_ID_OFFSET, 4).getInt();
    if (applicationId != 0 && applicationId != dev.outboxreplay.sqlite.SqliteDatabase
        .APPLICATION_ID) {
      throw new OutboxStorageException("cannot open database file " + file + ": it is another "
          + "application's SQLite database (application_id 0x" + Integer.toHexString(applicationId)
          + "); it was left untouched");
    }
  }

  /**
   * {@code PRAGMA quick_check} through a read-only connection, on files of at most {@code limit}
   * bytes.
   */
  private static void quickCheck(Path file, boolean immutable, long limit) {
    try {
      if (Files.size(file) > limit) {
        return;
      }
    } catch (IOException e) {
      return; // the open reports it
    }
    SQLiteConfig config = new SQLiteConfig();
    config.setReadOnly(true);
    config.setBusyTimeout(10_000);
    try (Connection c = config.createConnection("jdbc:sqlite:" + file
            + (immutable ? "?immutable=1" : ""));
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("PRAGMA quick_check")) {
      String first = rs.next() ? rs.getString(1) : "ok";
      if (!"ok".equals(first)) {
        throw new OutboxStorageException("cannot open database file " + file + ": it is "
            + "damaged (SQLite's quick_check: " + first + "); it was left untouched; restore it "
            + "from a backup, or move it away to start empty");
      }
    } catch (SQLException e) {
      if (SqliteErrors.isBusy(e)) {
        return; // another process holds it busy: it can read it, so can the open after this
      }
      throw new OutboxStorageException("cannot open database file " + file + ": "
          + SqliteErrors.reason(e) + "; it was left untouched", e);
    }
  }

  /**
   * Refuses, before SQLite fails in the middle of a write, a file this user may not write or
   * whose folder it may not create the {@code -wal} and {@code -shm} files in.
   */
  private static void requireWritable(Path file) {
    if (Files.exists(file) && !Files.isWritable(file)) {
      throw new OutboxStorageException("cannot open " + file + " for writing: the file is "
          + "read-only for this user; reading it (read-only opens, outbox status) still works");
    }
    Path folder = file.getParent();
    if (folder != null && Files.isDirectory(folder) && !Files.isWritable(folder)) {
      throw new OutboxStorageException("cannot open " + file + " for writing: this user may not "
          + "create files in " + folder + ", where SQLite keeps the file's write-ahead log; "
          + "reading it (read-only opens, outbox status) still works");
    }
  }

  /** {@code failure} opening the pool, as the library reports it. */
  public static OutboxStorageException cannotOpen(Path file, RuntimeException failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql) {
        return new OutboxStorageException("cannot open database file " + file + ": "
            + SqliteErrors.reason(sql), failure, SqliteErrors.isBusy(sql));
      }
    }
    return new OutboxStorageException("cannot open database file " + file + ": " + failure,
        failure);
  }

  /** Makes the file and its {@code -wal} and {@code -shm} owner-only, where they exist. */
  public static void restrictToOwner(Path file) {
    for (Path p : new Path[] {file, sidecar(file, "-wal"), sidecar(file, "-shm")}) {
      PrivateFiles.restrictToOwner(p);
    }
  }

  /** The database file's size plus its {@code -wal}'s. */
  public static long sizeWithLog(Path file) {
    long size = 0;
    for (Path p : new Path[] {file, sidecar(file, "-wal")}) {
      try {
        size += Files.size(p);
      } catch (IOException missing) {
        // no -wal: nothing to add
      }
    }
    return size;
  }

  private static Path sidecar(Path file, String suffix) {
    return file.resolveSibling(file.getFileName() + suffix);
  }

}
