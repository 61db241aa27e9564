package dev.outboxreplay.examples.cli;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.examples.ratchet.RatchetInboxExample;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.server.TenantResolver;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The offline-first scenario end to end, on real parts: the reference server on loopback, an
 * outbox in an H2 or SQLite file ({@code --engine}), a user queueing edits across several notes while offline, the network coming up,
 * responses lost after the server committed, a 503 burst, the replaying process killed with
 * SIGKILL mid-replay and restarted, and an inbox receiving duplicated encrypted messages. Exits 0
 * only if every command was applied exactly once and every message consumed once.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Run the offline-first scenario end to end and check its guarantees.")
final class DemoCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--dir", description = "Folder for the database files (default: a new "
      + "temporary one).")
  Path dir;

  @Option(names = "--commands", defaultValue = "240", description = "Edits to queue (default 240).")
  int commands;

  @Option(names = "--seed", description = "Seed for lost responses (default: random, printed).")
  Long seed;

  @Option(names = "--engine", defaultValue = "h2", paramLabel = "h2|sqlite",
      description = "Engine of the app's files: its outbox and inbox (default h2). The "
          + "reference receiver keeps its records in H2 either way.")
  String engineName;

  private PrintWriter out;
  private final List<String> failures = new ArrayList<>();
  /** The app's bearer token: random per run, handed to the child replayer in an owner-only file. */
  private String token;
  private Path tokenFile;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, this::runDemo);
  }

  private int runDemo() throws Exception {
    out = spec.commandLine().getOut();
    long started = System.nanoTime();
    OutboxEngine engine = OutboxEngine.named(engineName);
    Path base = dir != null ? dir : Files.createTempDirectory("outbox-demo");
    refuseEarlierRun(base);
    ownerOnlyFolder(base);
    long lossSeed = seed != null ? seed : System.nanoTime();
    SplittableRandom random = new SplittableRandom(lossSeed);
    out.printf("outbox demo in %s (seed %d, app files on %s)%n", base, lossSeed,
        engine.name().toLowerCase(java.util.Locale.ROOT));
    token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
    tokenFile = base.resolve("token");
    Files.deleteIfExists(tokenFile);
    try {
      Files.createFile(tokenFile, PosixFilePermissions.asFileAttribute(
          PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException notPosix) {
      Files.createFile(tokenFile); // Windows: the folder's access list applies
    }
    Files.writeString(tokenFile, token + "\n");
    int port = freePort();
    String url = "http://127.0.0.1:" + port;
    AtomicInteger posts = new AtomicInteger();
    AtomicInteger lost = new AtomicInteger();
    AtomicInteger busy = new AtomicInteger();
    Path clientFile = OutboxEngine.fileOf(base.resolve("client"), engine);

    try (JdbcDatabase client = engine.open(clientFile, false, true, Duration.ofSeconds(10), null);
        H2Database serverDb = H2Database.open(base.resolve("server"))) {
      JdbcOutboxStore store = JdbcOutboxStore.create(client);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      createNotes(client);

      step("offline: the user edits %d notes; each edit and its outbox row commit together",
          commands);
      for (int i = 0; i < commands; i++) {
        String note = "note-" + (i % 12);
        editNote(client, outbox, note, i);
      }
      check(total(store) == commands, commands + " commands queued durably");
      try (Replayer<Connection> replayer = replayer(store, url)) {
        PassSummary refused = replayer.runPass();
        check(refused.acked() == 0 && refused.pausedReason() == Reason.OFFLINE,
            "network down: the connection was refused, replay holds offline");
        List<dev.outboxreplay.OutboxRecord> tried = store.list(Status.RETRYABLE_FAILED, commands);
        check(!tried.isEmpty() && tried.stream()
                .allMatch(r -> r.attempt() == 0 && r.firstSentAt() == null),
            "no attempt spent and no max age started by requests that never left");
      }

      step("the network comes up; the server loses 1 in 5 responses after committing, "
          + "then answers a burst of 503s");
      NotesApplication notes = new NotesApplication(serverDb);
      // The receiver takes the tenant from the app's bearer token, never from a header alone.
      IdempotentServer server = IdempotentServer.builder().database(serverDb).port(port)
          .handler(NotesApplication.OPERATION, notes.handler())
          .tenants(TenantResolver.bearerTokens(Map.of(token, HttpContract.DEFAULT_TENANT)))
          .faults(request -> {
            int n = posts.incrementAndGet();
            if (n > 60 && n <= 90) {
              busy.incrementAndGet();
              return FaultPlan.Fault.fail(503, Duration.ofSeconds(1));
            }
            synchronized (random) {
              if (random.nextInt(5) == 0) {
                lost.incrementAndGet();
                return FaultPlan.Fault.dropResponseAfterCommit();
              }
            }
            return FaultPlan.Fault.NONE;
          }).start();
      try {
        step("a replayer process starts, and is killed with SIGKILL in the middle of replay");
        Process child = startChildReplay(clientFile, url);
        long killAt = commands / 3;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (store.countByStatus().get(Status.ACKED) < killAt && child.isAlive()
            && System.nanoTime() < deadline) {
          Thread.sleep(20); // polling a real child process, bounded by the deadline
        }
        child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        Map<Status, Long> atKill = store.countByStatus();
        out.printf("    killed with %d acked, %d in flight (claimed/sending)%n",
            atKill.get(Status.ACKED), atKill.get(Status.CLAIMED) + atKill.get(Status.SENDING));

        step("the app restarts: recovery, reconciliation of uncertain rows, replay to the end");
        drain(store, url);
        Map<Status, Long> counts = store.countByStatus();
        check(counts.get(Status.ACKED) == commands, "all " + commands + " commands acked");
        check(notes.totalEffects() == commands, "server applied " + notes.totalEffects()
            + " effects for " + commands + " commands");
        check(notes.keysAppliedMoreThanOnce() == 0, "no key applied twice");
        boolean ordered = true;
        for (int n = 0; n < 12; n++) {
          List<Long> order = notes.arrivalOrder("note-" + n);
          for (int k = 1; k < order.size(); k++) {
            ordered &= order.get(k) > order.get(k - 1);
          }
        }
        check(ordered, "each note's edits reached the server in the order they were made");

        step("an inbox receives every encrypted message one to three times");
        RatchetInboxExample.Report inbox = RatchetInboxExample.run(
            ownerOnlyFolder(base.resolve("inbox")), 30,
            p -> engine.open(OutboxEngine.fileOf(p, engine), false, true,
                Duration.ofSeconds(10), null));
        check(inbox.consumed() == 30 && inbox.historyRows() == 30,
            "30 messages decrypted once and stored once from " + inbox.deliveries()
                + " deliveries");

        long reconciled = store.list(Status.ACKED, commands).stream()
            .filter(r -> store.auditTrail(r.commandId()).stream()
                .anyMatch(e -> e.to() == Status.UNKNOWN))
            .count();
        long resends = posts.get() - busy.get() - commands;
        out.println();
        out.printf("%-42s %8s%n", "", "count");
        row("commands accepted", commands);
        row("acked", counts.get(Status.ACKED));
        row("conflicts", counts.get(Status.CONFLICT));
        row("rejected", counts.get(Status.REJECTED));
        row("unknown outcomes resolved", reconciled);
        row("responses lost after commit", lost.get());
        row("503 answers", busy.get());
        row("requests resent after an unknown outcome", Math.max(0, resends));
        row("server business effects", notes.totalEffects());
        row("inbox deliveries", inbox.deliveries());
        row("inbox duplicates suppressed", inbox.duplicates());
        row("time (ms)", (System.nanoTime() - started) / 1_000_000);
      } finally {
        server.close();
      }
    }
    if (!failures.isEmpty()) {
      out.println("FAILED: " + failures);
      out.flush();
      return 1;
    }
    out.println("all checks passed: every command applied exactly once, every message "
        + "consumed once");
    out.flush();
    return 0;
  }

  private Replayer<Connection> replayer(JdbcOutboxStore store, String url) {
    return replayer(store, url, OutboxListener.NONE);
  }

  private Replayer<Connection> replayer(JdbcOutboxStore store, String url,
      OutboxListener listener) {
    return Replayer.builder(store, OkHttpTransport.builder(HttpUrl.get(url))
            .callTimeout(Duration.ofSeconds(1)).build())
        .session(() -> new SessionRuntime.Snapshot(HttpContract.DEFAULT_TENANT, 0, false, token))
        .concurrency(4).batchSize(24).lease(Duration.ofSeconds(2))
        .holdInterval(Duration.ofMillis(300))
        .retryPolicy(RetryPolicy.builder().initialInterval(Duration.ofMillis(100))
            .maxInterval(Duration.ofSeconds(1)).maxAttempts(50).build())
        .owner("demo-app").listener(listener).build();
  }

  /** Replays until nothing is left, waiting for retries and expired leases; bounded. */
  private void drain(JdbcOutboxStore store, String url) throws InterruptedException {
    AtomicInteger reconciled = new AtomicInteger();
    try (Replayer<Connection> replayer = replayer(store, url, new OutboxListener() {
      @Override
      public void onTransition(Transition t) {
        if (t.reason() == Reason.RECONCILED_COMMITTED) {
          reconciled.incrementAndGet();
        }
      }
    })) {
      replayer.start();
      boolean drained = replayer.awaitDrained(Duration.ofSeconds(120));
      out.printf("    %s; %d acked by reconciliation instead of a resend%n",
          drained ? "drained" : "not drained within 120 s", reconciled.get());
      out.flush();
    }
  }

  private Process startChildReplay(Path clientFile, String url) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        OutboxTool.class.getName(), "replay", "--db", clientFile.toString(), "--url", url,
        "--until-drained", "--timeout", "120s", "--lease", "2s", "--concurrency", "4",
        "--token-file", tokenFile.toString(), "--tenant", HttpContract.DEFAULT_TENANT)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
  }

  private void step(String format, Object... args) {
    out.println("- " + String.format(format, args));
    out.flush();
  }

  private void check(boolean ok, String what) {
    out.println((ok ? "    ok   " : "    FAIL ") + what);
    out.flush();
    if (!ok) {
      failures.add(what);
    }
  }

  private void row(String label, long value) {
    out.printf("%-42s %8d%n", label, value);
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void createNotes(JdbcDatabase database) throws SQLException {
    try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS note (id VARCHAR(64) PRIMARY KEY, body VARCHAR(200), "
          + "edits INT)");
    }
  }

  /** The app's edit and its outbox row in one transaction, in SQL both engines run. */
  private static void editNote(JdbcDatabase database, Outbox<Connection> outbox, String id,
      int seq) {
    database.inTransaction(c -> {
      int updated;
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE note SET body = ?, edits = edits + 1 WHERE id = ?")) {
        ps.setString(1, "edit " + seq);
        ps.setString(2, id);
        updated = ps.executeUpdate();
      }
      if (updated == 0) {
        try (PreparedStatement ps = c.prepareStatement(
            "INSERT INTO note (id, body, edits) VALUES (?, ?, 1)")) {
          ps.setString(1, id);
          ps.setString(2, "edit " + seq);
          ps.executeUpdate();
        }
      }
      return outbox.accept(c, OutboxCommand.of(NotesApplication.OPERATION, id,
          Map.of("entity", id, "seq", seq, "body", "edit " + seq)));
    });
  }

  /** Creates {@code dir} if missing, owner-only ({@code 0700}) where the file system allows. */
  private static Path ownerOnlyFolder(Path dir) throws java.io.IOException {
    if (!Files.isDirectory(dir)) {
      try {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
      } catch (UnsupportedOperationException notPosix) {
        Files.createDirectories(dir); // Windows: the parent's access list applies
      }
    }
    return dir;
  }

  /**
   * Refuses a folder that holds an earlier run's files: the demo's counts (effects per command)
   * are only meaningful from empty files, and it never deletes files it did not create.
   */
  private static void refuseEarlierRun(Path base) {
    for (String name : List.of("client.mv.db", "client.sqlite", "server.mv.db", "inbox")) {
      if (Files.exists(base.resolve(name))) {
        throw new Cli.Failure(Cli.BAD_INPUT, base + " holds an earlier demo run (" + name
            + "); give --dir a new or empty folder, or leave --dir out for a temporary one");
      }
    }
  }

  private static long total(JdbcOutboxStore store) {
    return store.countByStatus().values().stream().mapToLong(Long::longValue).sum();
  }
}
