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

    ToolRun result = ToolRun.of("compact", "--db", file.toString(), "--tombstone-after", "30s");
    assertThat(result.exit()).isZero();
    JsonNode counts = JSON.readTree(result.out());
    assertThat(counts.get("tombstoned").asInt()).isEqualTo(1);
    assertThat(counts.get("deleted").asInt()).isZero();
    assertThat(counts.get("fileBytesBefore").asLong()).isPositive();
    assertThat(counts.get("fileBytesAfter").asLong()).isPositive()
        .isEqualTo(java.nio.file.Files.size(dir.resolve("outbox.mv.db")));

    ToolRun table = ToolRun.of("list", "--db", file.toString(), "--status", "acked");
    assertThat(table.exit()).as(table.err()).isZero();
    assertThat(table.out()).contains(acked.commandId().toString());
    ToolRun export = ToolRun.of("export", "--db", file.toString());
    assertThat(export.exit()).as(export.err()).isZero();
    assertThat(export.out()).doesNotContain("buy milk").contains(acked.payload().sha256Hex());
    JsonNode tomb = JSON.readTree(ToolRun.of("list", "--db", file.toString(), "--status", "acked",
        "--json").out().lines().findFirst().orElseThrow());
    JsonNode kept = JSON.readTree(ToolRun.of("list", "--db", file.toString(), "--status", "queued",
        "--json").out().lines().findFirst().orElseThrow());
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
    ToolRun result = ToolRun.of("compact", "--db", file.toString(), "--delete-after", "1d");
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("--delete-after").contains("--key-retention");
    assertThat(ToolRun.of("compact", "--db", file.toString(), "--tombstone-after", "1y").err())
        .contains("not a duration");
  }

  @Test
  void theDefaultKeyRetentionIsTheRetryPolicys() {
    CommandLine.Model.OptionSpec option = new CommandLine(new OutboxTool())
        .getSubcommands().get("compact").getCommandSpec().findOption("--key-retention");
    assertThat(option.defaultValue()).isEqualTo(
        RetryPolicy.DEFAULT_KEY_RETENTION.toDays() + "d");
  }

}
