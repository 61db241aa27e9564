package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.Status;
import dev.outboxreplay.examples.cli.OutboxTool;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code outbox compact}: the history retention on demand, and its refusals. */
class CompactCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path dir;

  @Test
  void compactTombstonesEndedCommandsAndListShowsOnlyTheHash() throws Exception {
    Path file = dir.resolve("outbox");
    OutboxRecord acked;
    OutboxRecord open;
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<java.sql.Connection> outbox = Outbox.builder(store).build();
      acked = outbox.accept(OutboxCommand.of("note.put", "a", Map.of("body", "buy milk")));
      OutboxRecord held = store.claim("r", Duration.ofMinutes(1), 10, Instant.now()).get(0);
      store.complete(held.commandId(), held.fencingToken(), Status.CLAIMED, Outcome.acked(null),
          Instant.now().minusSeconds(60));   // ended a minute ago
      open = outbox.accept(OutboxCommand.of("note.put", "b", Map.of("body", "open")));
    }

    String[] result = run("compact", "--db", file.toString(), "--tombstone-after", "30s");
    assertThat(result[0]).isEqualTo("0");
    JsonNode counts = JSON.readTree(result[1]);
    assertThat(counts.get("tombstoned").asInt()).isEqualTo(1);
    assertThat(counts.get("deleted").asInt()).isZero();

    String[] table = run("list", "--db", file.toString(), "--status", "acked");
    assertThat(table[0]).as(table[2]).isEqualTo("0");
    assertThat(table[1]).contains(acked.commandId().toString());
    String[] export = run("export", "--db", file.toString());
    assertThat(export[0]).as(export[2]).isEqualTo("0");
    assertThat(export[1]).doesNotContain("buy milk").contains(acked.payload().sha256Hex());
    JsonNode tomb = JSON.readTree(run("list", "--db", file.toString(), "--status", "acked",
        "--json")[1].lines().findFirst().orElseThrow());
    JsonNode kept = JSON.readTree(run("list", "--db", file.toString(), "--status", "queued",
        "--json")[1].lines().findFirst().orElseThrow());
    assertThat(tomb.get("commandId").asText()).isEqualTo(acked.commandId().toString());
    assertThat(kept.get("commandId").asText()).isEqualTo(open.commandId().toString());
    assertThat(tomb.get("payload").isNull()).isTrue();
    assertThat(tomb.get("payloadSha256").asText()).isEqualTo(acked.payload().sha256Hex());
    assertThat(kept.get("payload").get("body").asText()).isEqualTo("open");
  }

  @Test
  void deletingTombstonesBeforeTheKeyRetentionIsRefused() {
    Path file = dir.resolve("outbox");
    try (H2Database db = H2Database.open(file)) {
      H2OutboxStore.create(db);
    }
    String[] result = run("compact", "--db", file.toString(), "--delete-after", "1d");
    assertThat(result[0]).isEqualTo("2");
    assertThat(result[2]).contains("--delete-after").contains("--key-retention");
    assertThat(run("compact", "--db", file.toString(), "--tombstone-after", "1y")[2])
        .contains("not a duration");
  }

  @Test
  void theDefaultKeyRetentionIsTheRetryPolicys() {
    CommandLine.Model.OptionSpec option = new CommandLine(new OutboxTool())
        .getSubcommands().get("compact").getCommandSpec().findOption("--key-retention");
    assertThat(option.defaultValue()).isEqualTo(
        RetryPolicy.DEFAULT_KEY_RETENTION.toDays() + "d");
  }

  /** Exit code, standard output and standard error of one run of the tool. */
  private static String[] run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new OutboxTool());
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(args);
    return new String[] {String.valueOf(exit), out.toString(), err.toString()};
  }
}
