package dev.outboxreplay.examples.cli;

import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.server.TenantResolver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  @Option(names = "--tokens", paramLabel = "FILE", description = "File of '<token> <tenant>' "
      + "lines: requests must carry one of these bearer tokens, and act for its tenant. Without "
      + "it the Outbox-Tenant header is trusted as sent (not authenticated).")
  Path tokens;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      if (port < 0 || port > 65_535) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--port out of range: " + port);
      }
      if (tokens != null) {
        Cli.warnIfOthersCanRead(spec, "--tokens", tokens);
      }
      TenantResolver tenants = tokens == null ? TenantResolver.TENANT_HEADER_UNAUTHENTICATED
          : TenantResolver.bearerTokens(readTokens(tokens));
      requireFreePort(port); // before the database file is created
      H2Database database = H2Database.open(db);
      IdempotentServer server;
      try {
        server = IdempotentServer.builder().database(database).port(port).tenants(tenants)
            .handler(NotesApplication.OPERATION, new NotesApplication(database).handler())
            .start();
      } catch (IOException | RuntimeException e) {
        database.close();
        throw new Cli.Failure(Cli.BAD_INPUT, "cannot serve on 127.0.0.1:" + port + ": " + e);
      }
      if (tokens == null) {
        spec.commandLine().getErr().println("warning: the Outbox-Tenant header is not "
            + "authenticated: any local process can act for any tenant (see --tokens)");
      }
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

  /** Exit 2 with one line when another process listens on {@code port} of 127.0.0.1. */
  private static void requireFreePort(int port) {
    if (port == 0) {
      return;
    }
    try (ServerSocket probe = new ServerSocket()) {
      probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    } catch (IOException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot serve on 127.0.0.1:" + port + ": "
          + e.getMessage() + " (another process listens there?)");
    }
  }

  /** '<token> <tenant>' per line; blank lines and lines starting with # are skipped. */
  static Map<String, String> readTokens(Path file) {
    Map<String, String> tenantByToken = new HashMap<>();
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException | UncheckedIOException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read --tokens " + file + ": "
          + e.getClass().getSimpleName());
    }
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] fields = line.split("\\s+");
      if (fields.length != 2) {
        // the line holds a secret: name it by number only
        throw new Cli.Failure(Cli.BAD_INPUT, "--tokens " + file + " line " + (i + 1)
            + " is not '<token> <tenant>'");
      }
      tenantByToken.put(fields[0], fields[1]);
    }
    if (tenantByToken.isEmpty()) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--tokens " + file + " holds no token");
    }
    return tenantByToken;
  }
}
