package dev.outboxreplay.testkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.testkit.OutboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link OutboxStoreContract} for a {@link JdbcOutboxStore}: the caller's transaction is a
 * connection of the store's database that has begun a write as the engine's dialect says. A
 * module subclasses it with how to open its database.
 */
public abstract class JdbcOutboxStoreContract extends OutboxStoreContract<Connection> {

  /** Opens (or reopens) the database file {@code file}. */
  protected abstract JdbcDatabase openDatabase(Path file);

  @Override
  protected final OutboxStore<Connection> openStore(Path directory) {
    return JdbcOutboxStore.create(openDatabase(directory.resolve("outbox")));
  }

  @Override
  protected final void closeStore(OutboxStore<Connection> store) {
    ((JdbcOutboxStore) store).database().close();
  }

  @Override
  protected final Connection beginTransaction(OutboxStore<Connection> store) {
    JdbcDatabase database = ((JdbcOutboxStore) store).database();
    try {
      Connection c = database.dataSource().getConnection();
      c.setAutoCommit(false);
      database.dialect().beginWrite(c); // a caller's transaction that writes takes the lock first
      return c;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected final void commit(Connection transaction) {
    try (transaction) {
      transaction.commit();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected final void rollback(Connection transaction) {
    try (transaction) {
      transaction.rollback();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aConnectionInAutoCommitModeIsRefusedAsTheCallersTransactionAndNothingIsWritten()
      throws SQLException {
    OutboxRecord queued = outbox.accept(OutboxCommand.of("note.put", "a", Map.of("n", 1)));
    Instant now = clock.instant();
    JdbcDatabase database = ((JdbcOutboxStore) store).database();
    try (Connection autoCommit = database.dataSource().getConnection()) {
      autoCommit.setAutoCommit(true);
      assertThatThrownBy(() -> outbox.accept(autoCommit,
          OutboxCommand.of("note.put", "b", Map.of("n", 2))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("auto-commit mode");
      assertThatThrownBy(() -> store.claim(autoCommit, "r", LEASE, 10, now))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> store.markSending(autoCommit, List.of(queued), now.plus(LEASE),
          now)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> store.complete(autoCommit, queued, Status.SENDING,
          Outcome.acked(null), now)).isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(store.find(queued.commandId()).orElseThrow().status()).isEqualTo(Status.QUEUED);
    assertThat(store.claim("r", LEASE, 10, now)).extracting(OutboxRecord::commandId)
        .as("only the first command was accepted, and nothing claimed it")
        .containsExactly(queued.commandId());
  }
}
