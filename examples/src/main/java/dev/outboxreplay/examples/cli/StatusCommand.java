package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code outbox status}: counts per status, oldest pending age, poison and unknown counts. */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show how many commands are in each status; works while replay runs.")
final class StatusCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin ExistingOutboxFile outboxFile;

  @Option(names = "--json", description = "One JSON object instead of a table.")
  boolean json;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      try (ExistingOutboxFile.Opened opened = outboxFile.openReadOnly()) {
        JdbcOutboxStore store = opened.store();
        boolean empty = Cli.unfinished(spec, opened);
        Map<Status, Long> counts = empty ? Status.zeroCounts() : store.countByStatus();
        Map<String, Long> rejectedBy = empty ? Map.of() : store.countByErrorCode(Status.REJECTED);
        long poison = rejectedBy.getOrDefault(Reason.POISON_MAX_ATTEMPTS.wireName(), 0L)
            + rejectedBy.getOrDefault(Reason.POISON_MAX_AGE.wireName(), 0L)
            + rejectedBy.getOrDefault(Reason.UNRESOLVED_KEY_EXPIRED.wireName(), 0L);
        long needsAttention =
            rejectedBy.getOrDefault(Reason.UNRESOLVED_KEY_EXPIRED.wireName(), 0L);
        Duration age = (empty ? java.util.Optional.<Instant>empty() : store.oldestOpenAcceptedAt())
            .map(oldest -> Duration.between(oldest, Instant.now())).orElse(Duration.ZERO);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
          ObjectNode node = Cli.JSON.createObjectNode();
          node.set("counts", Cli.counts(counts));
          node.put("oldestPendingAgeSeconds", age.toSeconds()).put("poison", poison)
              .put("needsAttention", needsAttention).put("unknown", counts.get(Status.UNKNOWN));
          out.println(node);
        } else {
          counts.forEach((s, n) -> out.printf("%-17s %8d%n", s.wireName(), n));
          out.printf("%-17s %8ds%n", "oldest pending", age.toSeconds());
          out.printf("%-17s %8d%n", "poison", poison);
          out.printf("%-17s %8d%n", "needs attention", needsAttention);
        }
        out.flush();
        return Cli.OK;
      }
    });
  }
}
