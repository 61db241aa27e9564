package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool.PoolInitializationException;
import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.message.DbException;
import org.junit.jupiter.api.Test;

/**
 * Opening a pool again when the process serving the file closed under its first connection. The
 * failures are HikariCP's and H2's own exception types, with H2's own error codes. Time is a
 * counter that each pause advances by its least length: nothing waits.
 */
class PoolOpenerTest {
  private static final Path FILE = Path.of("outbox.mv.db");
  private final List<Long> pauses = new ArrayList<>();
  private long nanos = 1_000_000_000L;
  private final Handover.Pacing pacing = new Handover.Pacing() {
    @Override
    public long nanoTime() {
      return nanos;
    }

    @Override
    public void pause(long millis) {
      pauses.add(millis);
      nanos += TimeUnit.MILLISECONDS.toNanos(millis);
    }
  };

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
    }, Duration.ofSeconds(10), FILE, pacing);
    assertThat(pool).isSameAs(opened);
    assertThat(tries).hasValue(3);
    assertThat(pauses).containsExactly(10L, 20L);
  }

  @Test
  void aFailureThatIsNoHandoverIsThrownAtOnceNamingTheFile() {
    AtomicInteger tries = new AtomicInteger();
    assertThatThrownBy(() -> PoolOpener.openAgainAfterHandover(() -> {
      tries.incrementAndGet();
      throw new PoolInitializationException(DbException.get(90030).getSQLException());
    }, Duration.ofSeconds(10), FILE, pacing))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("cannot open database file " + FILE)
        .hasMessageContaining("the file is corrupt");
    assertThat(tries).hasValue(1);
  }

  @Test
  void aHandoverThatOutlastsTheOpenWaitIsThrown() {
    PoolInitializationException failure = shutDownUnderFirstConnection();
    AtomicInteger tries = new AtomicInteger();
    assertThatThrownBy(() -> PoolOpener.openAgainAfterHandover(() -> {
      tries.incrementAndGet();
      throw failure;
    }, Duration.ofMillis(200), FILE, pacing))
        .isInstanceOf(OutboxStorageException.class)
        .hasMessageContaining("cannot open database file " + FILE)
        .hasCause(failure);
    // pauses of at least 10 ms within 200 ms: tried again, and not without end
    assertThat(tries.get()).isBetween(2, 21);
    // the handover pace: pauses from 10 ms doubling, until 200 ms have passed since the start
    assertThat(pauses).containsExactly(10L, 20L, 40L, 80L, 160L);
    assertThat(tries).hasValue(6);
  }

  @Test
  void aZeroOpenWaitTriesOnce() {
    AtomicInteger tries = new AtomicInteger();
    assertThatThrownBy(() -> PoolOpener.openAgainAfterHandover(() -> {
      tries.incrementAndGet();
      throw shutDownUnderFirstConnection();
    }, Duration.ZERO, FILE, pacing)).isInstanceOf(OutboxStorageException.class);
    assertThat(tries).hasValue(1);
  }
}
