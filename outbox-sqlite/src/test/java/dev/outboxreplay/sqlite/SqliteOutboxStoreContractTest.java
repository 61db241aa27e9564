package dev.outboxreplay.sqlite;

import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.testkit.OutboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

/** Runs the store contract against a SQLite file database. */
class SqliteOutboxStoreContractTest extends OutboxStoreContract<Connection> {

  @Override
  protected OutboxStore<Connection> openStore(Path directory) {
    return SqliteOutboxStore.create(SqliteDatabase.open(directory.resolve("outbox")));
  }

  @Override
  protected void closeStore(OutboxStore<Connection> store) {
    ((SqliteOutboxStore) store).database().close();
  }

  @Override
  protected Connection beginTransaction(OutboxStore<Connection> store) {
    SqliteDatabase database = ((SqliteOutboxStore) store).database();
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
  protected void commit(Connection transaction) {
    try (transaction) {
      transaction.commit();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected void rollback(Connection transaction) {
    try (transaction) {
      transaction.rollback();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
