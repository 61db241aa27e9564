package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.TransportResult.Kind;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.http.KeyHeaderFormat;
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
import okhttp3.OkHttpClient;
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
  /** The shortest {@code --lease}: half of it is each request's time limit. */
  private static final Duration SHORTEST_LEASE = Duration.ofSeconds(2);
  private static final Pattern CLASSIFY = Pattern.compile("(\\d{3})=([a-z_]+)");

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--url", required = true, description = "Receiver base URL.")
  String url;

  @Option(names = "--until-drained",
      description = "Keep replaying (waiting for retries) until nothing is left or the timeout.")
  boolean untilDrained;

  @Option(names = "--timeout", defaultValue = "60s", description = "e.g. 60s, 2m (default 60s).",
      converter = Cli.DurationConverter.class)
  Duration timeout;

  @Option(names = "--concurrency", defaultValue = "4", description = "Sends in flight (default 4).")
  int concurrency;

  @Option(names = "--lease", defaultValue = "60s", converter = Cli.DurationConverter.class,
      description = "Claim lease; a crashed replayer's rows are taken over after it (default 60s).")
  Duration lease;

  @Option(names = "--no-reconciliation",
      description = "The receiver has no reconciliation endpoint (a plain Idempotency-Key "
          + "receiver): resend unknown commands with their key without asking first. Without "
          + "this option a missing endpoint is detected and remembered.")
  boolean noReconciliation;

  @Option(names = "--classify", paramLabel = "CODE=KIND",
      description = "Classify an HTTP status as one of: retryable, unknown, in_progress, "
          + "conflict, rejected, unauthorized, forbidden, key_already_used. Repeatable. For a "
          + "receiver whose 409 only means 'in progress' (express-idempotency): "
          + "--classify 409=in_progress; for one that answers every repeat of a key with 409 "
          + "(django-idempotency-key): --classify 409=key_already_used")
  List<String> classify = new ArrayList<>();

  @Option(names = "--key-format", defaultValue = "quoted", paramLabel = "quoted|bare",
      description = "How the Idempotency-Key header carries the key: quoted, an RFC 8941 "
          + "string as the IETF draft says (default), or bare, for receivers that compare the "
          + "raw header value with a key they know unquoted.")
  String keyFormat;

  @Option(names = "--max-interval", defaultValue = "5m", converter = Cli.DurationConverter.class,
      description = "Longest wait between two attempts of a command (default ${DEFAULT-VALUE}).")
  Duration maxInterval;

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
      if (tokenFile != null && !spec.commandLine().getParseResult().hasMatchedOption("--tenant")) {
        // a receiver with tokens acts for the token's tenant and answers 403 to commands sent
        // for another one, which ends each of them rejected: refuse before anything is sent
        throw new Cli.Failure(Cli.BAD_INPUT, "--token-file needs --tenant: a receiver with "
            + "tokens takes the tenant from the token and refuses (403, ending each command "
            + "rejected) commands sent for another; give the token's tenant, for example "
            + "--tenant " + HttpContract.DEFAULT_TENANT + " if that is its tenant");
      }
      SessionRuntime.Snapshot session = new SessionRuntime.Snapshot(tenant, 0, false,
          tokenFile == null ? null : Cli.readSecret(spec, "--token-file", tokenFile));
      if (lease.compareTo(SHORTEST_LEASE) < 0) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--lease must be at least "
            + SHORTEST_LEASE.toSeconds() + "s: each request may take half of it");
      }
      if (concurrency < 1) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--concurrency must be at least 1");
      }
      HttpUrl base = HttpUrl.parse(url);
      if (base == null) {
        throw new Cli.Failure(Cli.BAD_INPUT, "not an http(s) URL: "
            + url.replaceAll("//[^/@]*@", "//(userinfo redacted)@"));
      }
      Instant deadline = Instant.now().plus(timeout);
      OkHttpTransport.Builder transport = OkHttpTransport.builder(base)
          .callTimeout(lease.dividedBy(2)).reconciliation(!noReconciliation)
          .keyHeaderFormat(keyFormat());
      RetryPolicy retry = retryPolicy();
      for (String rule : classify) {
        classify(transport, rule);
      }
      try (ExistingOutboxFile.Opened opened = outboxFile.openForWriting()) {
        JdbcOutboxStore store = opened.store();
        if (!reachable(base, deadline)) {
          return finish(store.countByStatus(), new AtomicInteger(), new AtomicInteger(),
              Cli.UNREACHABLE);
        }
        AtomicInteger conflicts = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        AtomicInteger forbidden = new AtomicInteger();
        PrintWriter err = spec.commandLine().getErr();
        try (Replayer<Connection> replayer = Replayer.builder(store, transport.build())
            .session(() -> session).concurrency(concurrency).lease(lease)
            .retryPolicy(retry)
            .owner("outbox-cli-" + ProcessHandle.current().pid())
            .listener(new OutboxListener() {
              @Override
              public void onTransition(Transition t) {
                if (t.to() == Status.CONFLICT) {
                  conflicts.incrementAndGet();
                } else if (t.to() == Status.REJECTED) {
                  rejected.incrementAndGet();
                  if (t.reason() == Reason.FORBIDDEN) {
                    forbidden.incrementAndGet();
                  }
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
            drained = replayer.awaitDrained(remaining(deadline));
          } else {
            PassSummary pass;
            do {
              pass = replayer.runPass();
            } while (!pass.idle() && pass.pausedReason() == null
                && Instant.now().isBefore(deadline));
            drained = Status.countOpen(store.countByStatus()) == 0;
          }
          Map<Status, Long> counts = store.countByStatus();
          // the last commands can end between the wait's timeout and this read: the exit code
          // says what the summary below says
          drained |= Status.countOpen(counts) == 0;
          err.printf("replay: %d acked, %d conflict, %d rejected, %d left%n",
              counts.get(Status.ACKED), counts.get(Status.CONFLICT), counts.get(Status.REJECTED),
              Status.countOpen(counts));
          if (Status.countOpen(counts) > 0) {
            OpenCommandsReport.print(err, store, Instant.now());
          }
          if (forbidden.get() > 0) {
            err.println("replay: " + forbidden.get() + " command(s) ended rejected with 403 "
                + "(forbidden) for tenant '" + tenant + "'" + (tokenFile != null
                ? ": a receiver with tokens takes the tenant from the token; give --tenant the "
                + "token's tenant, then `outbox requeue` each of them"
                : "; `outbox requeue` each of them once the receiver lets this tenant in"));
          }
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

  /**
   * Whether the receiver answers: probes ({@code HEAD} of the base URL) until one gets any HTTP
   * answer, pausing 250 ms doubling to 5 s between them, until {@code deadline}; a lost or
   * refused probe alone never ends the replay. Says on stderr why not otherwise.
   */
  private boolean reachable(HttpUrl base, Instant deadline) throws InterruptedException {
    OkHttpClient probe = OkHttpClients.create(Duration.ofSeconds(5));
    long pauseMillis = 250;
    while (true) {
      try (Response ignored = probe.newCall(new Request.Builder().url(base).head().build())
          .execute()) {
        return true;
      } catch (IOException e) {
        Duration left = remaining(deadline);
        if (left.toMillis() < pauseMillis) {
          PrintWriter err = spec.commandLine().getErr();
          err.println("outbox replay: cannot reach " + base.host() + ":" + base.port() + " ("
              + e.getClass().getSimpleName() + ", still at the end of --timeout); nothing was "
              + "sent");
          err.flush();
          return false;
        }
        Thread.sleep(pauseMillis);
        pauseMillis = Math.min(pauseMillis * 2, 5_000);
      }
    }
  }

  private static Duration remaining(Instant deadline) {
    Duration left = Duration.between(Instant.now(), deadline);
    return left.isNegative() ? Duration.ZERO : left;
  }

  private KeyHeaderFormat keyFormat() {
    return switch (keyFormat) {
      case "quoted" -> KeyHeaderFormat.STRUCTURED_STRING;
      case "bare" -> KeyHeaderFormat.BARE;
      default -> throw new Cli.Failure(Cli.BAD_INPUT, "--key-format is quoted or bare: '"
          + keyFormat + "'");
    };
  }

  private RetryPolicy retryPolicy() {
    Duration longest = Cli.positive("--max-interval", maxInterval);
    RetryPolicy.Builder retry = RetryPolicy.builder().maxInterval(longest);
    if (longest.compareTo(RetryPolicy.DEFAULT_INITIAL_INTERVAL) < 0) {
      retry.initialInterval(longest);
    }
    return retry.build();
  }


}
