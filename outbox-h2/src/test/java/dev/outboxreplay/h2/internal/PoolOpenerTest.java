package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool.PoolInitializationException;
import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.message.DbException;
import org.junit.jupiter.api.Test;

/**
 * Opening a pool again when the process serving the file closed under its first connection. The
 * failures are HikariCP's and H2's own exception types, with H2's own error codes.
 */
class PoolOpenerTest {
  private static final Path FILE = Path.of("outbox.mv.db");

  /** What HikariCP throws when its first statement meets the serving process's SHUTDOWN. */
  private static PoolInitializationException shutDownUnderFirstConnection() {
    return new PoolInitializationException(DbException.get(90135).getSQLException());
  }

  @Test
  void aPoolWhoseFirstConnectionTheServingProcessClosedIsOpenedAgain() {
    AtomicInteger tries = new AtomicInteger();
    HikariDataSource opened = new HikariDataSource();
    HikariDataSource pool = PoolOpener.openAgainAfterHandover(() -> {
      if (tries.incrementAndGet() < 3) {
        throw shutDownUnderFirstConnection();
      }
      return opened;
    }, Duration.ofSeconds(10), FILE);
    assertThat(pool).isSameAs(opened);
    assertThat(tries).hasValue(3);
  }

  @Test
  void aFailureThatIsNoHandoverIsThrownAtOnceNamingTheFile() {
    AtomicInteger tries = new AtomicInteger();
    assertThatThrownBy(() -> PoolOpener.openAgainAfterHandover(() -> {
      tries.incrementAndGet();
      throw new PoolInitializationException(DbException.get(90030).getSQLException());
    }, Duration.ofSeconds(10), FILE))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("cannot open database file " + FILE)
        .hasMessageContaining("the file is corrupt");
    assertThat(tries).hasValue(1);
  }

  @Test
  void aHandoverThatOutlastsTheOpenWaitIsThrown() {
    PoolInitializationException failure = shutDownUnderFirstConnection(); // made before timing
    AtomicInteger tries = new AtomicInteger();
    assertThatThrownBy(() -> PoolOpener.openAgainAfterHandover(() -> {
      tries.incrementAndGet();
      throw failure;
    }, Duration.ofMillis(200), FILE))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("cannot open database file " + FILE)
        .hasCause(failure);
    // pauses of at least 10 ms within 200 ms: tried again, and not without end
    assertThat(tries.get()).isBetween(2, 21);
  }

  @Test
  void aZeroOpenWaitTriesOnce() {
    AtomicInteger tries = new AtomicInteger();
    assertThatThrownBy(() -> PoolOpener.openAgainAfterHandover(() -> {
      tries.incrementAndGet();
      throw shutDownUnderFirstConnection();
    }, Duration.ZERO, FILE)).isInstanceOf(OutboxStorageException.class);
    assertThat(tries).hasValue(1);
  }
}
