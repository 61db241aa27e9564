package dev.outboxreplay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.Reason;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The lease-expiry decision, for every status a row can hold and every status it came from. */
class LeaseExpiryTest {
  private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");
  /** The statuses a claim takes a row from: where an unsent claimed row goes back to. */
  private static final Set<Status> CLAIMABLE =
      EnumSet.of(Status.QUEUED, Status.RETRYABLE_FAILED, Status.UNKNOWN);

  @Test
  void aSendingRowBecomesUnknownCountedAsAnAttemptThatMayHaveReachedTheReceiver() {
    for (Status claimedFrom : new Status[] {null, Status.QUEUED, Status.UNKNOWN}) {
      LeaseExpiry d = LeaseExpiry.of(Status.SENDING, claimedFrom, NOW);
      assertThat(d.next()).isEqualTo(Status.UNKNOWN);
      assertThat(d.reason()).isEqualTo(Reason.LEASE_EXPIRED_WHILE_SENDING);
      assertThat(d.countsAsAttempt()).isTrue();
      assertThat(d.mayHaveReachedReceiver()).isTrue();
      assertThat(d.error().code()).isEqualTo("lease_expired_while_sending");
      assertThat(d.error().message()).contains("may have reached the server");
      assertThat(d.error().at()).isEqualTo(NOW);
      assertThat(d.dueAt()).isEqualTo(NOW);
    }
  }

  @Test
  void aClaimedRowGoesBackUnsentToWhereItWasClaimedFromKeepingItsLastError() {
    for (Status from : Status.values()) {
      if (CLAIMABLE.contains(from)) {
        LeaseExpiry d = LeaseExpiry.of(Status.CLAIMED, from, NOW);
        assertThat(d.next()).as("claimed from %s", from).isEqualTo(from);
        assertThat(d.reason()).isEqualTo(Reason.LEASE_EXPIRED_WHILE_CLAIMED);
        assertThat(d.countsAsAttempt()).isFalse();
        assertThat(d.mayHaveReachedReceiver()).isFalse();
        assertThat(d.error()).as("keeps the row's last error").isNull();
        assertThat(d.dueAt()).isEqualTo(NOW);
      } else {
        assertThatThrownBy(() -> LeaseExpiry.of(Status.CLAIMED, from, NOW))
            .as("claimed from %s", from).isInstanceOf(IllegalStateException.class);
      }
    }
    assertThatThrownBy(() -> LeaseExpiry.of(Status.CLAIMED, null, NOW))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void onlyClaimedAndSendingRowsHoldALease() {
    for (Status held : Status.values()) {
      if (held == Status.CLAIMED || held == Status.SENDING) {
        LeaseExpiry d = LeaseExpiry.of(held, Status.QUEUED, NOW);
        assertThat(StateMachine.isAllowed(held, d.next())).as("%s -> %s", held, d.next())
            .isTrue();
        assertThat(d.reason().mayHaveReachedReceiver()).isEqualTo(d.mayHaveReachedReceiver());
      } else {
        assertThatThrownBy(() -> LeaseExpiry.of(held, Status.QUEUED, NOW))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no lease");
      }
    }
  }
}
