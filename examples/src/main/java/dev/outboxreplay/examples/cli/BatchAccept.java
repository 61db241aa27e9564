package dev.outboxreplay.examples.cli;

import dev.outboxreplay.IdempotencyConflictException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code enqueue}'s accept of one batch whose commands already have their ids: tried again while
 * its failure passes (another process handing the file over), since the same ids find what a
 * failed try committed instead of queueing it twice; after the last failure, what is stored is
 * looked up, so that a reported failure has changed nothing, or says exactly what it committed.
 */
final class BatchAccept {
  /** Tries of a batch whose failure passes, each after the store's own handover retries. */
  static final int TRIES = 3;

  private final Outbox<?> outbox;
  private final String db;
  private final PrintWriter err;

  BatchAccept(Outbox<?> outbox, String db, PrintWriter err) {
    this.outbox = outbox;
    this.db = db;
    this.err = err;
  }

  /**
   * The batch's records.
   *
   * @throws Cli.Failure saying nothing was accepted, or that whether it was is unknown (naming
   *     the ids to look for)
   */
  List<OutboxRecord> accept(List<OutboxCommand> commands) {
    for (int attempt = 1; ; attempt++) {
      try {
        return outbox.acceptAll(commands);
      } catch (IdempotencyConflictException e) {
        throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage() + "; nothing was accepted");
      } catch (OutboxStorageException e) {
        if (e.retryable() && attempt < TRIES) {
          continue;
        }
        return storedDespite(commands, e.getMessage());
      } catch (OutOfMemoryError e) {
        Cli.memoryExhausted = true;
        // the batch's transaction is gone with the failed call; what it left is looked up
        return storedDespite(commands, "the batch of " + commands.size() + " command(s) does "
            + "not fit in this JVM's memory (" + EnqueueCommand.maxHeap() + "); split it, or "
            + "give the JVM more memory (for example JAVA_TOOL_OPTIONS=-Xmx512m)");
      }
    }
  }

  /**
   * After an accept that failed for good: the batch is atomic, so its first command tells
   * whether it is stored. Stored (its commit happened after all): the records, with a note on
   * stderr. Not stored: a failure that says nothing was accepted. Unknown: a failure naming the
   * ids.
   */
  private List<OutboxRecord> storedDespite(List<OutboxCommand> commands, String failure) {
    boolean stored;
    try {
      stored = outbox.store().find(commands.get(0).commandId()).isPresent();
    } catch (RuntimeException unknown) {
      throw new Cli.Failure(Cli.BAD_INPUT, failure + "; whether the "
          + commands.size() + " command(s) were accepted is unknown: look for ids "
          + range(commands) + " with `outbox list --db " + db + " --status queued` before "
          + "enqueueing them again");
    }
    if (!stored) {
      throw new Cli.Failure(Cli.BAD_INPUT, failure + "; nothing was accepted");
    }
    List<OutboxRecord> records = new ArrayList<>(commands.size());
    for (OutboxCommand c : commands) {
      records.add(outbox.store().find(c.commandId()).orElseThrow());
    }
    err.println("outbox enqueue: the accept reported a failure after its commit ("
        + failure + "); all " + commands.size() + " command(s) are stored");
    err.flush();
    return records;
  }

  /** The ids of {@code commands}, first to last, for messages. */
  static String range(List<OutboxCommand> commands) {
    return commands.get(0).commandId() + (commands.size() == 1 ? ""
        : " to " + commands.get(commands.size() - 1).commandId());
  }
}
