package dev.outboxreplay.examples.cli;

import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.OkHttpClients;
import dev.outboxreplay.http.OkHttpTransport;
import java.io.IOException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
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
 * goes to stderr; the last stdout line is a JSON object of row counts per status. Exit 0 when no
 * row is left non-terminal, 3 when the timeout (or, without --until-drained, the end of the
 * currently due work) left work, 4 when the URL cannot be reached, 2 for bad input.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
    description = "Replay an outbox file against a receiver.")
final class ReplayCommand implements Callable<Integer> {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

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

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      Duration limit = parseDuration(timeout);
      Duration leaseDuration = parseDuration(lease);
      if (concurrency < 1) {
        throw new Cli.Failure(Cli.BAD_INPUT, "--concurrency must be at least 1");
      }
      HttpUrl base = HttpUrl.parse(url);
      if (base == null) {
        throw new Cli.Failure(Cli.BAD_INPUT, "not an http(s) URL: " + url);
      }
      try (H2Database database = outboxFile.open()) {
        requireReachable(base);
        H2OutboxStore store = H2OutboxStore.create(database);
        PrintWriter err = spec.commandLine().getErr();
        Instant deadline = Instant.now().plus(limit);
        try (Replayer<Connection> replayer = Replayer.builder(store,
                OkHttpTransport.builder(base).callTimeout(leaseDuration.dividedBy(2)).build())
            .concurrency(concurrency).lease(leaseDuration)
            .owner("outbox-cli-" + ProcessHandle.current().pid())
            .build()) {
          while (true) {
            PassSummary pass = replayer.runPass();
            Map<Status, Long> counts = store.countByStatus();
            long left = Status.countOpen(counts);
            err.printf("replay: acked %d, retrying %d, unknown %d, conflicts %d, rejected %d; "
                    + "%d left%n", pass.acked(), pass.retried(), pass.unknown(), pass.conflicts(),
                pass.rejected(), left);
            err.flush();
            if (left == 0) {
              return finish(counts, Cli.OK);
            }
            if (pass.pausedReason() != null) {
              err.println("replay: paused (" + pass.pausedReason() + ")");
              return finish(counts, Cli.WORK_LEFT);
            }
            Instant now = Instant.now();
            if (now.isAfter(deadline) || (!untilDrained && pass.idle())) {
              return finish(counts, Cli.WORK_LEFT);
            }
            if (pass.idle()) {
              Optional<Instant> due = store.nextDueAt();
              Instant wake = due.filter(d -> d.isBefore(deadline)).orElse(deadline);
              long millis = Math.max(50, Duration.between(now, wake).toMillis());
              Thread.sleep(Math.min(millis, 1_000)); // re-check at least every second
            }
          }
        }
      }
    });
  }

  private int finish(Map<Status, Long> counts, int exit) {
    spec.commandLine().getOut().println(Cli.counts(counts));
    spec.commandLine().getOut().flush();
    return exit;
  }

  private static void requireReachable(HttpUrl base) {
    try (Response ignored = OkHttpClients.create(Duration.ofSeconds(5))
        .newCall(new Request.Builder().url(base).head().build()).execute()) {
      // any HTTP answer means the receiver is there
    } catch (IOException e) {
      throw new Cli.Failure(Cli.UNREACHABLE, "cannot reach " + base + ": " + e.getMessage()
          + "; nothing was sent");
    }
  }

  static Duration parseDuration(String text) {
    Matcher m = DURATION.matcher(text.strip());
    if (!m.matches()) {
      throw new Cli.Failure(Cli.BAD_INPUT, "not a duration: '" + text
          + "' (use e.g. 500ms, 60s, 2m, 1h)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }
}
