package dev.outboxreplay.examples.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code outbox} command-line tool: {@code java -jar examples/target/outbox.jar --help}. */
@Command(name = "outbox", mixinStandardHelpOptions = true,
    versionProvider = OutboxTool.Version.class,
    description = "Durable client outbox on an embedded database (SQLite or H2).",
    subcommands = {DemoCommand.class, EnqueueCommand.class, ReplayCommand.class,
        StatusCommand.class, ListCommand.class, ExportCommand.class, RequeueCommand.class,
        BackupCommand.class, RestoreCommand.class,
        CompactCommand.class, ServeCommand.class})
public final class OutboxTool implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /**
   * The tool, ready to {@linkplain CommandLine#execute execute}: a bad option value is one line
   * on stderr and exit 2; anything unforeseen is one line and exit 1, never a stack trace.
   */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new OutboxTool());
    cli.setParameterExceptionHandler((e, args) -> {
      CommandLine.Model.CommandSpec failed = e.getCommandLine().getCommandSpec();
      return Cli.fail(failed, e.getMessage() + " (see " + failed.qualifiedName() + " --help)",
          Cli.BAD_INPUT);
    });
    cli.setExecutionExceptionHandler((e, failed, parsed) -> {
      if (e instanceof IllegalArgumentException) {
        // a library's check of a value the user gave
        return Cli.fail(failed.getCommandSpec(), e.getMessage(), Cli.BAD_INPUT);
      }
      return Cli.fail(failed.getCommandSpec(), "unexpected error: " + e
          + " (please report it)", Cli.INTERNAL_ERROR);
    });
    return cli;
  }

  public static void main(String[] args) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    // the pool's warnings repeat, with a stack trace, a failure the command reports in one line
    System.setProperty("org.slf4j.simpleLogger.log.com.zaxxer.hikari", "error");
    // a background compaction that fails (out of memory, say) is tried again by the next open;
    // a command reports in one line what happened to the file itself, never a second line
    System.setProperty(
        "org.slf4j.simpleLogger.log.dev.outboxreplay.h2.internal.CompactionSchedule", "error");
    // A library thread (compaction, the pool's housekeeping) that runs out of memory: the
    // command reports what it did to the file itself; the file is then left as a killed process
    // would leave it (see Cli.memoryExhausted). Other failures keep the JVM's default report.
    Thread.UncaughtExceptionHandler fallback = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((thread, failure) -> {
      if (failure instanceof OutOfMemoryError) {
        Cli.memoryExhausted = true;
      } else if (fallback != null) {
        fallback.uncaughtException(thread, failure);
      } else {
        thread.getThreadGroup().uncaughtException(thread, failure);
      }
    });
    CommandLine cli = commandLine();
    // straight to the file descriptor: System.out would swallow a failed write (a full disk)
    // where checkError cannot see it
    cli.setOut(new PrintWriter(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out),
        StandardCharsets.UTF_8)));
    int exit = cli.execute(args);
    cli.getOut().flush();
    if (Cli.memoryExhausted) {
      cli.getErr().flush();
      System.err.flush();
      Runtime.getRuntime().halt(exit); // no shutdown hooks: H2's would close the file
    }
    System.exit(exit);
  }

  /** The tool's version, {@code outbox X.Y.Z}, from the build's {@code version.properties}. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
      Properties p = new Properties();
      try (InputStream in = OutboxTool.class.getResourceAsStream("version.properties")) {
        if (in == null) {
          throw new IOException("version.properties is missing from the tool's jar");
        }
        p.load(in);
      }
      return new String[] {"outbox " + p.getProperty("version")};
    }
  }
}
