package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.AckingTransport;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replayer given two listeners (metrics and a status line, say) reports to both. */
class SeveralListenersTest {
  @TempDir Path dir;

  @Test
  void eachListenerAddedSeesEveryAckEvenWhenAnEarlierOneThrows() throws Exception {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      for (int n = 0; n < 5; n++) {
        outbox.accept(OutboxCommand.of("note.put", "note-" + n, Map.of("seq", n)));
      }
      List<CommandId> metrics = new CopyOnWriteArrayList<>();
      List<CommandId> statusLine = new CopyOnWriteArrayList<>();
      try (Replayer<Connection> replayer = Replayer.builder(store, AckingTransport.acking())
          .listener(acks(metrics, true)).listener(acks(statusLine, false)).build()) {
        replayer.runPass();
      }
      assertThat(store.countByStatus()).containsEntry(Status.ACKED, 5L);
      assertThat(metrics).hasSize(5).doesNotHaveDuplicates();
      assertThat(statusLine).containsExactlyInAnyOrderElementsOf(metrics);
    }
  }

  private static OutboxListener acks(List<CommandId> seen, boolean thenThrow) {
    return new OutboxListener() {
      @Override
      public void onTransition(Transition t) {
        if (t.to() == Status.ACKED) {
          seen.add(t.commandId());
          if (thenThrow) {
            throw new IllegalStateException("this listener's own bug");
          }
        }
      }
    };
  }
}
