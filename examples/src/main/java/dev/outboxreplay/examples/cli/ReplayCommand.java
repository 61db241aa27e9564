package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.TransportResult.Kind;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.OkHttpClients;
import dev.outboxreplay.http.OkHttpTransport;
import java.io.IOException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code outbox replay}: sends an outbox file's commands to {@code POST URL/{operation}}. Progress
 * goes to stderr; the last stdout line is always one JSON object: row counts per status, and how
 * many commands ended conflict or rejected during this run. Exit codes: 0 nothing left open, 3
 * work left at the timeout (or, without --until-drained, once nothing more was due), 4 the URL
 * cannot be reached, 5 a command ended conflict or rejected during the run (checked first), 2 bad
 * input.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
    description = "Replay an outbox file against a receiver.")
final class ReplayCommand implements Callable<Integer> {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");
  private static final Pattern CLASSIFY = Pattern.compile("(\\d{3})=([a-z_]+)");

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--url", required = true, description = "Receiver base URL.")
  String url;

  @Option(names = "--until-drained",
      description = "Keep replaying (waiting for retries) until nothing is left or the timeout.")
  boolean untilDrained;

  @Option(names = "--timeout", defaultValue = "60s", description = "e.g. 60s, 2m (default 60s).")
  String timeout;

  @Option(names = "--concurrency", defaultValue = "4", description = "Sends in flight (default 4).")
  int concurrency;

  @Option(names = "--lease", defaultValue = "60s",
      description = "Claim lease; a crashed replayer's rows are taken over after it (default 60s).")
  String lease;

  @Option(names = "--no-reconciliation",
      description = "The receiver has no reconciliation endpoint (a plain Idempotency-Key "
          + "receiver): resend unknown commands with their key without asking first. Without "
          + "this option a missing endpoint is detected and remembered.")
  boolean noReconciliation;

  @Option(names = "--classify", paramLabel = "CODE=KIND",
      description = "Classify an HTTP status as one of: retryable, unknown, in_progress, "
          + "conflict, rejected, unauthorized, forbidden. Repeatable. Example for a receiver "
          + "whose 409 only means 'in progress': --classify 409=in_progress")
  List<String> classify = new ArrayList<>();

  @Option(names = "--tenant", defaultValue = HttpContract.DEFAULT_TENANT,
      description = "Tenant the commands are sent for (default: ${DEFAULT-VALUE}).")
  String tenant;

  @Option(names = "--token-file", paramLabel = "FILE",
      description = "File whose first line is the bearer token sent with every request (kept "
          + "out of the command line, where other local users could read it).")
  Path tokenFile;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      SessionRuntime.Snapshot session = new SessionRuntime.Snapshot(tenant, 0, false,
          tokenFile == null ? null : Cli.readSecret(spec, "--token-file", tokenFile));
      Duration limit = parseDuration(timeout);
      Duration leaseDuration = parseDuration(lease);
      if (concurrency < 1) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--concurrency must be at least 1");
      }
      HttpUrl base = HttpUrl.parse(url);
      if (base == null) {
        throw new Cli.Failure(Cli.BAD_INPUT, "not an http(s) URL: "
            + url.replaceAll("//[^/@]*@", "//(userinfo redacted)@"));
      }
      OkHttpTransport.Builder transport = OkHttpTransport.builder(base)
          .callTimeout(leaseDuration.dividedBy(2)).reconciliation(!noReconciliation);
      for (String rule : classify) {
        classify(transport, rule);
      }
      try (ExistingOutboxFile.Opened opened = outboxFile.openForWriting()) {
        H2OutboxStore store = opened.store();
        if (!reachable(base)) {
          return finish(store.countByStatus(), new AtomicInteger(), new AtomicInteger(),
              Cli.UNREACHABLE);
        }
        AtomicInteger conflicts = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        PrintWriter err = spec.commandLine().getErr();
        try (Replayer<Connection> replayer = Replayer.builder(store, transport.build())
            .session(() -> session).concurrency(concurrency).lease(leaseDuration)
            .owner("outbox-cli-" + ProcessHandle.current().pid())
            .listener(new OutboxListener() {
              @Override
              public void onTransition(Transition t) {
                if (t.to() == Status.CONFLICT) {
                  conflicts.incrementAndGet();
                } else if (t.to() == Status.REJECTED) {
                  rejected.incrementAndGet();
                }
              }

              @Override
              public void onReplayPaused(Reason reason) {
                err.println("replay: paused (" + reason + ")");
                err.flush();
              }
            }).build()) {
          boolean drained;
          if (untilDrained) {
            replayer.start();
            drained = replayer.awaitDrained(limit);
          } else {
            Instant deadline = Instant.now().plus(limit);
            PassSummary pass;
            do {
              pass = replayer.runPass();
            } while (!pass.idle() && pass.pausedReason() == null
                && Instant.now().isBefore(deadline));
            drained = Status.countOpen(store.countByStatus()) == 0;
          }
          Map<Status, Long> counts = store.countByStatus();
          err.printf("replay: %d acked, %d conflict, %d rejected, %d left%n",
              counts.get(Status.ACKED), counts.get(Status.CONFLICT), counts.get(Status.REJECTED),
              Status.countOpen(counts));
          err.flush();
          int exit = conflicts.get() + rejected.get() > 0 ? Cli.ENDED_REFUSED
              : drained ? Cli.OK : Cli.WORK_LEFT;
          return finish(counts, conflicts, rejected, exit);
        }
      }
    });
  }

  private int finish(Map<Status, Long> counts, AtomicInteger conflicts, AtomicInteger rejected,
      int exit) {
    ObjectNode result = Cli.counts(counts);
    result.putObject("endedDuringRun").put("conflict", conflicts.get())
        .put("rejected", rejected.get());
    spec.commandLine().getOut().println(result);
    spec.commandLine().getOut().flush();
    return exit;
  }

  private static void classify(OkHttpTransport.Builder transport, String rule) {
    Matcher m = CLASSIFY.matcher(rule.strip());
    if (!m.matches()) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--classify wants CODE=KIND, e.g. 409=in_progress: '"
          + rule + "'");
    }
    Kind kind;
    try {
      kind = Kind.valueOf(m.group(2).toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "unknown kind '" + m.group(2) + "' in --classify");
    }
    try {
      transport.classify(Integer.parseInt(m.group(1)), kind);
    } catch (IllegalArgumentException e) {
      throw new Cli.Failure(Cli.BAD_INPUT, "--classify " + rule + ": " + e.getMessage());
    }
  }

  /** Any HTTP answer means the receiver is there; says on stderr why not otherwise. */
  private boolean reachable(HttpUrl base) {
    try (Response ignored = OkHttpClients.create(Duration.ofSeconds(5))
        .newCall(new Request.Builder().url(base).head().build()).execute()) {
      return true;
    } catch (IOException e) {
      PrintWriter err = spec.commandLine().getErr();
      err.println("outbox replay: cannot reach " + base.host() + ":" + base.port() + " ("
          + e.getClass().getSimpleName() + "); nothing was sent");
      err.flush();
      return false;
    }
  }

  static Duration parseDuration(String text) {
    Matcher m = DURATION.matcher(text.strip());
    if (!m.matches()) {
      throw new Cli.Failure(Cli.BAD_INPUT, "not a duration: '" + text
          + "' (use e.g. 500ms, 60s, 2m, 1h, 7d)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }
}
