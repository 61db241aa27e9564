package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An export reads one moment of the file: in the field, {@code outbox export} beside a running
 * {@code replay} listed 1,520 lines for 1,500 commands, some both queued and acked.
 */
class ExportSnapshotTest {
  @TempDir Path dir;

  @Test
  void commandsAckedAndAcceptedWhileAnExportRunsChangeNothingOfIt() {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      List<OutboxCommand> commands = new ArrayList<>();
      for (int i = 0; i < 1_200; i++) {
        commands.add(OutboxCommand.of("note.put", "n" + (i % 40), Map.of("i", i)));
      }
      outbox.acceptAll(commands);
      List<H2OutboxStore.Exported> exported = new ArrayList<>();
      store.export(e -> {
        if (exported.isEmpty()) { // a replay and the app go on meanwhile, on other connections
          Instant now = Instant.now();
          for (OutboxRecord held : store.claim("replay", Duration.ofMinutes(1), 40, now)) {
            store.complete(held.commandId(), held.fencingToken(), Status.CLAIMED,
                Outcome.acked(new StoredResponse(201, new byte[0])), now);
          }
          outbox.accept(OutboxCommand.of("note.put", "late", Map.of("late", true)));
        }
        exported.add(e);
      });
      assertThat(store.countByStatus()).as("the changes happened")
          .containsEntry(Status.ACKED, 40L).containsEntry(Status.QUEUED, 1_161L);
      assertThat(exported).hasSize(1_200);
      assertThat(new HashSet<>(exported.stream().map(e -> e.command().commandId()).toList()))
          .hasSize(1_200);
      assertThat(exported).allSatisfy(e -> {
        assertThat(e.command().status()).isEqualTo(Status.QUEUED);
        assertThat(e.audit()).isEmpty();
      });
    }
  }
}
