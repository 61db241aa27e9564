package dev.outboxreplay.examples.cli;

import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Status;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What {@code replay} says on stderr when it ends with commands still open: when the next
 * attempt is due, and which command waits for it and why (its last error), so that a replay that
 * ran out of time is never mistaken for a receiver that is down.
 */
final class OpenCommandsReport {
  /** Commands read per waiting status to find the one due first. */
  private static final int LOOK_AT = 1000;

  private OpenCommandsReport() {}

  static void print(PrintWriter err, OutboxStore<?> store, Instant now) {
    Optional<Instant> due = store.nextDueAt();
    if (due.isEmpty()) {
      return;
    }
    List<OutboxRecord> open = Stream.of(Status.QUEUED, Status.RETRYABLE_FAILED,
            Status.UNKNOWN, Status.CLAIMED, Status.SENDING)
        .flatMap(status -> store.list(status, LOOK_AT).stream()).toList();
    // the row the store's due time is for; a row queued behind its entity's head is not due
    Optional<OutboxRecord> first = open.stream()
        .filter(r -> dueAt(r).equals(due.get())).findFirst()
        .or(() -> open.stream().min(Comparator.comparing(OpenCommandsReport::dueAt)));
    if (first.isEmpty()) {
      return;
    }
    OutboxRecord next = first.get();
    Duration wait = Duration.between(now, due.get());
    err.println("replay: the next attempt is due " + (wait.isNegative() || wait.isZero()
        ? "now" : "at " + due.get() + " (in " + seconds(wait) + ")") + "; "
        + describe(next, now) + "; run replay again then, or give a longer --timeout");
  }

  /** A held row is due when its lease ends; a waiting one at its next attempt. */
  private static Instant dueAt(OutboxRecord r) {
    return r.status() == Status.CLAIMED || r.status() == Status.SENDING
        ? Optional.ofNullable(r.leaseExpiresAt()).orElse(r.nextAttemptAt())
        : r.nextAttemptAt();
  }

  private static String describe(OutboxRecord r, Instant now) {
    String what = "command " + r.commandId() + " (entity '" + r.entityKey() + "') is "
        + r.status().wireName() + (r.claimOwner() == null ? ""
            : " by " + r.claimOwner() + ", whose lease ends then,")
        + " after " + r.attempt() + " attempt(s)";
    if (r.lastError() == null) {
      return what;
    }
    String message = r.lastError().message() == null ? "" : r.lastError().message();
    List<String> lines = message.lines().toList();
    String detail = lines.isEmpty() ? "" : lines.get(0);
    if (detail.length() > 120) {
      detail = detail.substring(0, 120) + "...";
    }
    return what + ", last error " + r.lastError().code()
        + (detail.isEmpty() ? "" : " (" + detail + ")")
        + " " + seconds(Duration.between(r.lastError().at(), now)) + " ago";
  }

  private static String seconds(Duration d) {
    return Math.max(0, d.toSeconds()) + " s";
  }
}
