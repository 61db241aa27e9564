package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.FileCompaction;
import dev.outboxreplay.testkit.AckingTransport;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What replay costs in commits, counted as H2 counts them: every commit that changes something
 * writes one new version of the store ({@code WRITE_DELAY=0}), and nothing else does while the
 * file's compaction is off. An entity's commands go out one at a time, so one sender replaying
 * one entity waits for every commit of every command: recording an ack, claiming the entity's
 * next command and marking it sending share one commit.
 */
class ReplayCommitsTest {
  private static final int COMMANDS = 60;

  @TempDir Path dir;

  @Test
  void oneSenderReplayingOneEntityCommitsOncePerCommand() throws Exception {
    try (H2Database db = H2Database.builder().file(dir.resolve("app")).compaction(false)
        .build()) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      for (int n = 0; n < COMMANDS; n++) {
        outbox.accept(OutboxCommand.of("note.put", "note-1", Map.of("seq", n)));
      }
      long before = FileCompaction.storeVersion(db.dataSource());
      try (Replayer<Connection> replayer = Replayer.builder(store, AckingTransport.acking())
          .concurrency(1).build()) {
        // passes on this thread, as many as it takes (one claims the whole entity in turn)
        for (int pass = 0; pass < 3 && store.countByStatus().getOrDefault(Status.ACKED, 0L)
            < COMMANDS; pass++) {
          replayer.runPass();
        }
      }
      long commits = FileCompaction.storeVersion(db.dataSource()) - before;
      System.out.printf("%d commands of one entity, one sender: %d commits%n", COMMANDS,
          commits);
      assertThat(store.countByStatus()).containsEntry(Status.ACKED, (long) COMMANDS);
      // Apart from one commit per command: the first claim (it also finds the entity's backlog),
      // lease recovery, and a sequence reserving its next values. Three commits per command, as
      // when the claim and the mark had commits of their own, would be 180.
      assertThat(commits).isBetween((long) COMMANDS, COMMANDS + 5L);
    }
  }
}
