package dev.outboxreplay.examples.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code outbox} command-line tool: {@code java -jar examples/target/outbox.jar --help}. */
@Command(name = "outbox", mixinStandardHelpOptions = true, version = "outbox 0.1.0",
    description = "Durable client outbox on an embedded H2 database.",
    subcommands = {DemoCommand.class, EnqueueCommand.class, ReplayCommand.class,
        StatusCommand.class, ListCommand.class, ExportCommand.class, RequeueCommand.class,
        CompactCommand.class, ServeCommand.class})
public final class OutboxTool implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  public static void main(String[] args) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.exit(new CommandLine(new OutboxTool()).execute(args));
  }
}
