package dev.outboxreplay.examples.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code outbox backup}: a consistent copy of an outbox file, taken through the engine while the
 * app may be running (H2 {@code BACKUP TO}, SQLite {@code VACUUM INTO}); copying an open file with
 * {@code cp} is not safe. The source is opened read-only; the backup is owner-only and never
 * overwrites a file.
 */
@Command(name = "backup", mixinStandardHelpOptions = true,
    description = "Copy an outbox file consistently, while the app may run (online backup).")
final class BackupCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--to", required = true, paramLabel = "FILE",
      description = "The backup file to write; must not exist.")
  Path to;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      Path target = to.toAbsolutePath();
      if (Files.exists(target)) {
        throw new Cli.Failure(Cli.BAD_INPUT, target + " exists: a backup never overwrites a "
            + "file; name a new one");
      }
      if (target.getParent() == null || !Files.isDirectory(target.getParent())) {
        throw new Cli.Failure(Cli.BAD_INPUT, "no folder " + target.getParent());
      }
      try (ExistingOutboxFile.Opened opened = outboxFile.openReadOnly()) {
        if (opened.unfinished()) {
          throw new Cli.Failure(Cli.BAD_INPUT, opened.file() + " holds no command yet: "
              + "nothing to back up");
        }
        OutboxEngine engine = OutboxEngine.of(opened.file());
        long commands = opened.store().countByStatus().values().stream()
            .mapToLong(Long::longValue).sum();
        Path staging = BackupFiles.stagingFolderBeside(target);
        try {
          Path staged = staging.resolve("backup");
          try (Connection c = opened.database().dataSource().getConnection()) {
            BackupFiles.copyOnline(engine, c, staged);
          }
          BackupFiles.ownerOnly(staged);
          Files.move(staged, target, StandardCopyOption.ATOMIC_MOVE);
        } finally {
          BackupFiles.deleteFolder(staging);
        }
        spec.commandLine().getOut().println(Cli.JSON.createObjectNode()
            .put("backup", target.toString()).put("engine", engine.name().toLowerCase())
            .put("commands", commands).put("bytes", Files.size(target)));
        spec.commandLine().getOut().flush();
        return Cli.OK;
      }
    });
  }
}
