package dev.outboxreplay.testkit.jdbc;

import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.jdbc.JdbcDatabase;
import dev.outboxreplay.jdbc.JdbcOutboxStore;
import dev.outboxreplay.testkit.OutboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

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
}
