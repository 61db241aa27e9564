package dev.outboxreplay.examples.cli;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.jdbc.JdbcDatabase;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code outbox restore}: puts a backup back in place of an outbox file. Refused (exit 6) when
 * the backup is older than what the receiver may have applied: commands the file holds that the
 * backup lacks (they would be forgotten; some may have taken effect), or commands the backup
 * holds open that the file shows answered (they would be sent again, and the receiver
 * recognises a repeat only while it keeps its key). {@code --force} restores anyway. The file
 * it replaces is kept beside it. An H2 file must not be open in any process; a SQLite file is
 * restored through SQLite's backup API, under SQLite's locks, even while an app has it open.
 */
@Command(name = "restore", mixinStandardHelpOptions = true,
    description = "Put a backup back; refused if the receiver may have applied more than the "
        + "backup knows, unless --force.")
final class RestoreCommand implements Callable<Integer> {
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--from", required = true, paramLabel = "FILE",
      description = "A file written by outbox backup.")
  Path from;

  @Option(names = "--force", description = "Restore even when the receiver may have applied "
      + "commands the backup does not know: they are forgotten, or sent again.")
  boolean force;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      if (!Files.isRegularFile(from) || !Files.isReadable(from)) {
        throw new Cli.Failure(Cli.BAD_INPUT, "no backup at " + from);
      }
      OutboxEngine engine = BackupFiles.engineOfBackup(from);
      if (engine == null) {
        throw new Cli.Failure(Cli.BAD_INPUT, from + " is not a backup made by outbox backup");
      }
      Path target = OutboxEngine.fileOf(outboxFile.db, engine).toAbsolutePath();
      if (Files.exists(target) && OutboxEngine.of(target) != engine) {
        throw new Cli.Failure(Cli.BAD_INPUT, from + " is a backup of a "
            + engine.name().toLowerCase() + " file; " + target + " is not one");
      }
      Path staging = BackupFiles.stagingFolderBeside(target);
      try {
        Path staged = staging.resolve("restored" + engine.suffix);
        BackupFiles.unpack(engine, from, staged);
        BackupFiles.ownerOnly(staged);
        Map<CommandId, OutboxRecord> restored;
        try (ExistingOutboxFile.Opened backup = outboxFile.openOtherReadOnly(staged)) {
          restored = BackupFiles.commandsOf(backup);
        }
        boolean replacing = Files.exists(target);
        String refusal = replacing ? compare(restored, target)
            : "there is no " + target + " to compare it with: if the app ran after this backup "
                + "was made, the receiver may have applied commands the backup does not know";
        if (refusal != null && !force) {
          throw new Cli.Failure(Cli.REFUSED_UNLESS_FORCED, "not restored: " + refusal
              + ". --force restores it anyway");
        }
        if (refusal != null) {
          spec.commandLine().getErr().println("outbox restore: restoring with --force: "
              + refusal);
        }
        Path kept = null;
        if (replacing) {
          kept = replace(engine, target, staged);
        } else {
          Files.move(staged, target, StandardCopyOption.ATOMIC_MOVE);
        }
        spec.commandLine().getOut().println(Cli.JSON.createObjectNode()
            .put("restored", target.toString()).put("commands", restored.size())
            .put("previousKeptAt", kept == null ? null : kept.toString()));
        spec.commandLine().getOut().flush();
        return Cli.OK;
      } finally {
        BackupFiles.deleteFolder(staging);
      }
    });
  }

  /**
   * Why restoring {@code restored} over {@code target} would lose or repeat what the receiver
   * may have applied; null when the file holds nothing the backup does not.
   */
  private String compare(Map<CommandId, OutboxRecord> restored, Path target) {
    Map<CommandId, OutboxRecord> now;
    try (ExistingOutboxFile.Opened current = outboxFile.openOtherReadOnly(target)) {
      now = BackupFiles.commandsOf(current);
    }
    long forgotten = 0;
    long forgottenSent = 0;
    long answeredAgain = 0;
    for (OutboxRecord r : now.values()) {
      OutboxRecord then = restored.get(r.commandId());
      if (then == null) {
        forgotten++;
        if (r.firstSentAt() != null || r.status().isTerminal()) {
          forgottenSent++;
        }
      } else if (!then.status().isTerminal() && r.status().isTerminal()) {
        answeredAgain++;
      }
    }
    if (forgotten == 0 && answeredAgain == 0) {
      return null;
    }
    StringBuilder why = new StringBuilder("the backup is older than " + target + ":");
    if (forgotten > 0) {
      why.append(" ").append(forgotten).append(" command(s) accepted after it would be "
          + "forgotten (").append(forgottenSent).append(" of them may already have taken "
          + "effect on the receiver, and the app would no longer know)");
    }
    if (answeredAgain > 0) {
      why.append(forgotten > 0 ? ";" : "").append(" ").append(answeredAgain).append(
          " command(s) the receiver has answered would be sent again (it recognises a repeat "
          + "only while it keeps the key, 7 days on the reference receiver; after that the "
          + "effect happens twice)");
    }
    return why.toString();
  }

  /**
   * Replaces {@code target} with {@code staged}, keeping the old file beside it; returns where.
   */
  private Path replace(OutboxEngine engine, Path target, Path staged) throws Exception {
    String name = target.getFileName().toString();
    String base = name.substring(0, name.length() - engine.suffix.length()) + ".before-restore-"
        + STAMP.format(Instant.now());
    Path kept = target.resolveSibling(base + engine.suffix);
    for (int n = 2; Files.exists(kept); n++) {
      kept = target.resolveSibling(base + "-" + n + engine.suffix);
    }
    if (engine == OutboxEngine.SQLITE) {
      try (JdbcDatabase db = engine.open(target, false, false, outboxFile.wait, null);
          Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        BackupFiles.copyOnline(engine, c, kept);
        BackupFiles.ownerOnly(kept);
        s.executeUpdate("restore from '" + staged.toString().replace("'", "''") + "'");
      }
      return kept;
    }
    // H2 holds a lock on its file while it has it open: take it, so that no process has it
    try (FileChannel channel = FileChannel.open(target, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        throw new Cli.Failure(Cli.BAD_INPUT, target + " is open in a running process: close "
            + "the app (and any outbox command on it), then restore");
      }
      try {
        Files.copy(target, kept, StandardCopyOption.COPY_ATTRIBUTES);
        BackupFiles.ownerOnly(kept);
        Files.move(staged, target, StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      } finally {
        lock.release();
      }
    } catch (IOException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot restore over " + target + ": " + e);
    }
    return kept;
  }
}
