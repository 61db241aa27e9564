package dev.outboxreplay.examples.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.JdbcIdempotencyRecords;
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

/**
 * {@code outbox serve}: the reference idempotent server with the notes application, on an H2
 * file ({@code --db}) or as one node of several on a shared PostgreSQL ({@code --postgres}).
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Run the reference idempotent server (operation note.put) on 127.0.0.1.")
final class ServeCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--port", defaultValue = "0", description = "Port (default: a free one).")
  int port;

  @Option(names = "--db", description = "Server database file (H2). This or --postgres.")
  Path db;

  @Option(names = "--postgres", paramLabel = "JDBC_URL", description = "A PostgreSQL database "
      + "that several nodes share, e.g. jdbc:postgresql://127.0.0.1:5432/receiver?user=app. "
      + "The password comes from --postgres-password-file or PGPASSWORD, never from here.")
  String postgres;

  @Option(names = "--postgres-password-file", paramLabel = "FILE", description = "A file whose "
      + "first line is the PostgreSQL password (default: the PGPASSWORD environment variable).")
  Path passwordFile;

  @Option(names = "--node", description = "This node's name among the nodes on one database: "
      + "its own, and the same across its restarts (required with --postgres; default local).")
  String node;

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
      if ((db == null) == (postgres == null)) {
        throw new Cli.Failure(Cli.BAD_INPUT, "give --db FILE (H2) or --postgres JDBC_URL");
      }
      requireFreePort(port); // before the database file is created
      Opened opened = postgres != null ? openPostgres() : openH2();
      IdempotentServer server;
      try {
        server = IdempotentServer.builder().port(port).tenants(tenants)
            .records(opened.records())
            .handler(NotesApplication.OPERATION, opened.notes().handler()).start();
      } catch (IOException | RuntimeException e) {
        opened.close();
        throw new Cli.Failure(Cli.BAD_INPUT, "cannot serve on 127.0.0.1:" + port + ": " + e);
      }
      if (tokens == null) {
        spec.commandLine().getErr().println("warning: the Outbox-Tenant header is not "
            + "authenticated: any local process can act for any tenant (see --tokens)");
      }
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        server.close();
        opened.close();
      }));
      spec.commandLine().getOut().println("serving " + server.baseUrl()
          + (postgres != null ? " as node " + node : "") + " (POST /"
          + NotesApplication.OPERATION + ", GET /_outbox/reconcile); Ctrl-C stops");
      spec.commandLine().getOut().flush();
      new CountDownLatch(1).await();
      return Cli.OK;
    });
  }

  /**
   * What the server keeps its records and the notes application's effects in, and what to
   * close when it stops (the H2 file, or the pool to PostgreSQL).
   */
  private record Opened(Runnable closer, JdbcIdempotencyRecords records,
      NotesApplication notes) {
    void close() {
      closer.run();
    }
  }

  private Opened openH2() {
    H2Database database = H2Database.open(db);
    try {
      return new Opened(database::close, JdbcIdempotencyRecords.onH2(database,
          node == null ? JdbcIdempotencyRecords.DEFAULT_NODE : node,
          JdbcIdempotencyRecords.DEFAULT_LEASE), new NotesApplication(database));
    } catch (RuntimeException e) {
      database.close();
      throw e;
    }
  }

  /** A pool to the shared PostgreSQL database, the records on it, and the notes table. */
  private Opened openPostgres() {
    if (!postgres.startsWith("jdbc:postgresql:")) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--postgres takes a jdbc:postgresql: URL");
    }
    if (postgres.toLowerCase(java.util.Locale.ROOT).contains("password=")) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--postgres: a password in the URL is on the "
          + "command line, where other local users can read it; put it in "
          + "--postgres-password-file or PGPASSWORD");
    }
    if (node == null || node.isBlank()) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--node NAME is required with --postgres: each "
          + "node's own name, the same across its restarts");
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(postgres);
    config.setPoolName("receiver-" + node);
    config.setMaximumPoolSize(20);
    String password = passwordFile != null
        ? Cli.readSecret(spec, "--postgres-password-file", passwordFile)
        : System.getenv("PGPASSWORD");
    if (password != null) {
      config.setPassword(password);
    }
    HikariDataSource pool;
    try {
      pool = new HikariDataSource(config);
    } catch (RuntimeException e) {
      // the driver's message names host and database, never the password
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot reach PostgreSQL at " + postgres + ": "
          + rootMessage(e));
    }
    try {
      JdbcIdempotencyRecords records = JdbcIdempotencyRecords.onPostgres(pool, node,
          JdbcIdempotencyRecords.DEFAULT_LEASE);
      return new Opened(pool::close, records, NotesApplication.onPostgres(pool));
    } catch (RuntimeException e) {
      pool.close();
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot prepare the receiver's tables: "
          + rootMessage(e));
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage();
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
