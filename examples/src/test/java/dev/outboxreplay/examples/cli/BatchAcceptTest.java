package dev.outboxreplay.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An enqueue that reports a failure has changed nothing, or says exactly what it committed: in
 * the field, with about ten enqueue processes on one file, two reported "database is open in
 * exclusive mode" and printed no ids although their batches were stored. Here the store's insert
 * commits and then fails, as a commit whose session the serving process closed can.
 */
class BatchAcceptTest {
  @TempDir Path dir;

  @Test
  void aPassingFailureAfterTheCommitIsTriedAgainWithTheSameIdsAndStoresEachCommandOnce() {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      AtomicInteger inserts = new AtomicInteger();
      Outbox<Connection> outbox = Outbox.builder(failingAfterCommit(store, inserts, 1, true))
          .build();
      List<OutboxCommand> batch = batch(3);
      StringWriter err = new StringWriter();
      List<OutboxRecord> records =
          new BatchAccept(outbox, "app", new PrintWriter(err)).accept(batch);
      assertThat(inserts).as("the failed try, then one that found its rows").hasValue(2);
      assertThat(records).extracting(OutboxRecord::commandId)
          .containsExactlyElementsOf(batch.stream().map(OutboxCommand::commandId).toList());
      assertThat(store.countByStatus()).containsEntry(Status.QUEUED, 3L);
    }
  }

  @Test
  void aFailureThatLastsIsReportedAsStoredWhenTheCommitHappened() {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      AtomicInteger inserts = new AtomicInteger();
      Outbox<Connection> outbox = Outbox.builder(
          failingAfterCommit(store, inserts, Integer.MAX_VALUE, true)).build();
      List<OutboxCommand> batch = batch(2);
      StringWriter err = new StringWriter();
      List<OutboxRecord> records =
          new BatchAccept(outbox, "app", new PrintWriter(err)).accept(batch);
      assertThat(inserts).hasValue(BatchAccept.TRIES);
      assertThat(records).hasSize(2);
      assertThat(err.toString()).contains("after its commit").contains("all 2 command(s) are "
          + "stored");
      assertThat(store.countByStatus()).containsEntry(Status.QUEUED, 2L);
    }
  }

  @Test
  void aFailureBeforeTheCommitSaysNothingWasAccepted() {
    try (H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Outbox<Connection> outbox = Outbox.builder(failingBeforeCommit(store)).build();
      assertThatThrownBy(() -> new BatchAccept(outbox, "app", new PrintWriter(new StringWriter()))
          .accept(batch(2)))
          .isInstanceOf(Cli.Failure.class).hasMessageContaining("nothing was accepted");
      assertThat(store.countByStatus()).containsEntry(Status.QUEUED, 0L);
    }
  }

  private static List<OutboxCommand> batch(int n) {
    List<OutboxCommand> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      batch.add(OutboxCommand.of("note.put", "n", Map.of("i", i))
          .withCommandId(CommandId.generate()));
    }
    return batch;
  }

  /** {@code store}, whose first {@code failures} inserts commit and then throw. */
  @SuppressWarnings("unchecked")
  private static OutboxStore<Connection> failingAfterCommit(H2OutboxStore store,
      AtomicInteger inserts, int failures, boolean retryable) {
    return (OutboxStore<Connection>) Proxy.newProxyInstance(
        BatchAcceptTest.class.getClassLoader(), new Class<?>[] {OutboxStore.class},
        (proxy, method, args) -> {
          Object result = invoke(store, method, args);
          if (method.getName().equals("insert") && args.length == 1
              && inserts.incrementAndGet() <= failures) {
            throw new OutboxStorageException("accept failed on app.mv.db: The database is open "
                + "in exclusive mode", null, retryable);
          }
          return result;
        });
  }

  /** {@code store}, whose inserts throw before writing anything. */
  @SuppressWarnings("unchecked")
  private static OutboxStore<Connection> failingBeforeCommit(H2OutboxStore store) {
    return (OutboxStore<Connection>) Proxy.newProxyInstance(
        BatchAcceptTest.class.getClassLoader(), new Class<?>[] {OutboxStore.class},
        (proxy, method, args) -> {
          if (method.getName().equals("insert")) {
            throw new OutboxStorageException("cannot open database file app.mv.db: corrupt",
                null, false);
          }
          return invoke(store, method, args);
        });
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
