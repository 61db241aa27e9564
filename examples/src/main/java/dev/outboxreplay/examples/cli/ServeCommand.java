package dev.outboxreplay.examples.cli;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code outbox serve}: the reference idempotent server with the notes application. */
@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Run the reference idempotent server (operation note.put) on 127.0.0.1.")
final class ServeCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--port", defaultValue = "0", description = "Port (default: a free one).")
  int port;

  @Option(names = "--db", required = true, description = "Server database file.")
  Path db;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      if (port < 0 || port > 65_535) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--port out of range: " + port);
      }
      H2Database database = H2Database.open(db);
      IdempotentServer server = IdempotentServer.builder().database(database).port(port)
          .handler(NotesApplication.OPERATION, new NotesApplication(database).handler()).start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        server.close();
        database.close();
      }));
      spec.commandLine().getOut().println("serving " + server.baseUrl() + " (POST /"
          + NotesApplication.OPERATION + ", GET /_outbox/reconcile); Ctrl-C stops");
      spec.commandLine().getOut().flush();
      new CountDownLatch(1).await();
      return Cli.OK;
    });
  }
}
