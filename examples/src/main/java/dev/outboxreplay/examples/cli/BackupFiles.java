package dev.outboxreplay.examples.cli;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * What {@code backup} and {@code restore} share: the engines' online copies (H2's {@code BACKUP
 * TO}, a zip holding the {@code .mv.db}; SQLite's {@code VACUUM INTO}, a database file), owner-only
 * folders (beside a destination, or for a private copy), and reading every command of a file.
 */
final class BackupFiles {
  private static final byte[] ZIP_MAGIC = {'P', 'K', 3, 4};

  private BackupFiles() {}

  /** Writes a transactionally consistent copy of the open database to {@code out}. */
  static void copyOnline(OutboxEngine engine, Connection c, Path out) throws SQLException {
    String path = out.toAbsolutePath().toString().replace("'", "''");
    try (Statement s = c.createStatement()) {
      s.execute((engine == OutboxEngine.H2 ? "BACKUP TO '" : "VACUUM INTO '") + path + "'");
    }
  }

  /** The engine a backup file was made from, from its first bytes; null when neither. */
  static OutboxEngine engineOfBackup(Path backup) throws IOException {
    byte[] head = OutboxEngine.head(backup);
    if (head.length >= ZIP_MAGIC.length
        && Arrays.equals(Arrays.copyOf(head, ZIP_MAGIC.length), ZIP_MAGIC)) {
      return OutboxEngine.H2; // BACKUP TO writes a zip holding the .mv.db
    }
    return OutboxEngine.fromHead(head) == OutboxEngine.SQLITE ? OutboxEngine.SQLITE : null;
  }

  /**
   * Writes the database a backup holds to {@code staged}: the one {@code .mv.db} entry of an H2
   * backup, or a SQLite backup as it is.
   */
  static void unpack(OutboxEngine engine, Path backup, Path staged) throws IOException {
    if (engine == OutboxEngine.SQLITE) {
      Files.copy(backup, staged);
      return;
    }
    boolean found = false;
    try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(backup))) {
      for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
        if (e.isDirectory() || !e.getName().endsWith(".mv.db") || e.getName().contains("/")
            || e.getName().contains("\\") || found) {
          throw new Cli.Failure(Cli.BAD_INPUT, backup + " is not a backup made by outbox "
              + "backup: unexpected entry '" + e.getName() + "'");
        }
        found = true;
        try (OutputStream out = Files.newOutputStream(staged, StandardOpenOption.CREATE_NEW)) {
          zip.transferTo(out);
        }
      }
    }
    if (!found) {
      throw new Cli.Failure(Cli.BAD_INPUT, backup + " holds no H2 database file");
    }
  }

  /** A new folder beside {@code file} that only this user may enter. */
  static Path stagingFolderBeside(Path file) throws IOException {
    return privateFolder(file.toAbsolutePath().getParent(), ".outbox-staging-");
  }

  /**
   * A new folder named {@code prefix} and a random part, in {@code parent} (null: the system's
   * temporary folder), that only this user may enter.
   */
  static Path privateFolder(Path parent, String prefix) throws IOException {
    try {
      FileAttribute<?> ownerOnly =
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
      return parent == null ? Files.createTempDirectory(prefix, ownerOnly)
          : Files.createTempDirectory(parent, prefix, ownerOnly);
    } catch (UnsupportedOperationException notPosix) {
      return parent == null ? Files.createTempDirectory(prefix)
          : Files.createTempDirectory(parent, prefix);
    }
  }

  /** Makes {@code file} owner-only where the file system has POSIX permissions. */
  static void ownerOnly(Path file) throws IOException {
    try {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException notPosix) {
      // Windows: the folder's ACL decides
    }
  }

  /** Deletes a folder this tool made and what is left in it; one it cannot is left behind. */
  static void deleteFolder(Path dir) {
    try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // left behind: a hidden, owner-only folder
    }
  }

  /** Every command of an open outbox file, by id, in accept order. */
  static Map<CommandId, OutboxRecord> commandsOf(ExistingOutboxFile.Opened opened) {
    Map<CommandId, OutboxRecord> commands = new LinkedHashMap<>();
    if (!opened.unfinished()) {
      opened.store().export(e -> commands.put(e.command().commandId(), e.command()));
    }
    return commands;
  }
}
