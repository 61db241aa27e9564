package dev.outboxreplay.h2;

import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.testkit.OutboxStoreContract;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

/** Runs the store contract against an H2 file database. */
class H2OutboxStoreContractTest extends OutboxStoreContract<Connection> {

  @Override
  protected OutboxStore<Connection> openStore(Path directory) {
    return H2OutboxStore.create(H2Database.open(directory.resolve("outbox")));
  }

  @Override
  protected void closeStore(OutboxStore<Connection> store) {
    ((H2OutboxStore) store).database().close();
  }

  @Override
  protected Connection beginTransaction(OutboxStore<Connection> store) {
    try {
      Connection c = ((H2OutboxStore) store).database().dataSource().getConnection();
      c.setAutoCommit(false);
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
