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
import java.util.Arrays;
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
    description = "Run the reference idempotent server (operation note.put) on 127.0.0.1, "
        + "or on the address --bind names.")
final class ServeCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--port", defaultValue = "0", description = "Port (default: a free one).")
  int port;

  @Option(names = "--bind", paramLabel = "IP", defaultValue = "127.0.0.1", description = "The "
      + "IP address to listen on (default 127.0.0.1: this machine only). An address other "
      + "machines reach needs --tokens and prints a warning: the server speaks plain HTTP, so "
      + "only a TLS-terminating proxy should reach it.")
  String bind;

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
      InetAddress address = bindAddress(bind);
      String where = address.getHostAddress() + ":" + port;
      if (IdempotentServer.reachableFromOtherMachines(address)) {
        if (tokens == null) {
          throw new Cli.Failure(Cli.BAD_INPUT, "--bind " + bind + " is reachable from other "
              + "machines: give --tokens FILE too, or any of them could act for any tenant");
        }
        spec.commandLine().getErr().println("warning: --bind " + bind + " lets other machines "
            + "reach this server, which speaks plain HTTP: let only a TLS-terminating proxy "
            + "reach it");
        spec.commandLine().getErr().flush();
      }
      requireFreePort(address, port); // before the database file is created
      Opened opened = postgres != null ? openPostgres() : openH2();
      IdempotentServer server;
      try {
        server = IdempotentServer.builder().bindAddress(address).port(port).tenants(tenants)
            .records(opened.records())
            .handler(NotesApplication.OPERATION, opened.notes().handler()).start();
      } catch (IOException | RuntimeException e) {
        opened.close();
        throw new Cli.Failure(Cli.BAD_INPUT, "cannot serve on " + where + ": " + e);
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

  /**
   * The address {@code --bind} names, which must be an IPv4 or IPv6 literal: a host name would
   * be looked up, and could name another address on every start.
   */
  private static InetAddress bindAddress(String bind) {
    boolean literal = bind.matches("\\d{1,3}(\\.\\d{1,3}){3}")
        ? Arrays.stream(bind.split("\\.")).allMatch(octet -> Integer.parseInt(octet) <= 255)
        : bind.contains(":") && bind.matches("[0-9a-fA-F:.]+");
    Cli.Failure refused = new Cli.Failure(Cli.BAD_INPUT,
        "--bind takes an IP address such as 127.0.0.1, not '" + bind + "'");
    if (!literal) {
      throw refused;
    }
    try {
      return InetAddress.getByName(bind); // a literal: no lookup
    } catch (IOException e) {
      throw refused;
    }
  }

  /** Exit 2 with one line when {@code port} of {@code address} cannot be bound now. */
  private static void requireFreePort(InetAddress address, int port) {
    try (ServerSocket probe = new ServerSocket()) {
      probe.bind(new InetSocketAddress(address, port));
    } catch (IOException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot serve on " + address.getHostAddress() + ":"
          + port + ": " + e.getMessage() + (port == 0 ? "" : " (another process listens there?)"));
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
