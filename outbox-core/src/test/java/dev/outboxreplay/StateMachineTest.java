package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StateMachineTest {
  /** The expected engine moves, written out independently of the table under test. */
  private static final Set<String> ALLOWED = Set.of(
      "queued>claimed",
      "retryable_failed>claimed", "retryable_failed>rejected",
      "unknown>claimed", "unknown>rejected",
      "claimed>claimed", "claimed>sending", "claimed>queued", "claimed>retryable_failed",
      "claimed>unknown", "claimed>acked", "claimed>conflict", "claimed>rejected",
      "sending>acked", "sending>conflict", "sending>rejected", "sending>retryable_failed",
      "sending>unknown");

  @Test
  void everyPairOfStatusesIsAllowedExactlyWhenTheTableSaysSo() {
    Set<String> seen = new HashSet<>();
    for (Status from : Status.values()) {
      for (Status to : Status.values()) {
        String pair = from.wireName() + ">" + to.wireName();
        boolean expected = ALLOWED.contains(pair);
        assertThat(StateMachine.isAllowed(from, to)).as(pair).isEqualTo(expected);
        if (expected) {
          seen.add(pair);
          StateMachine.requireAllowed(from, to);
        } else {
          assertThatThrownBy(() -> StateMachine.requireAllowed(from, to))
              .isInstanceOf(IllegalStateException.class)
              .hasMessageContaining(from.wireName() + " -> " + to.wireName());
        }
      }
    }
    assertThat(seen).isEqualTo(ALLOWED);
  }

  @Test
  void terminalStatusesAreLeftOnlyByOperatorRequeue() {
    for (Status from : Status.values()) {
      for (Status to : Status.values()) {
        boolean operator = StateMachine.isOperatorAction(from, to);
        assertThat(operator).as(from + ">" + to)
            .isEqualTo((from == Status.CONFLICT || from == Status.REJECTED) && to == Status.QUEUED);
      }
      if (from.isTerminal()) {
        assertThat(StateMachine.allowedFrom(from)).as(from.wireName()).isEmpty();
      }
    }
    assertThat(Status.ACKED.isTerminal()).isTrue();
    assertThat(Status.UNKNOWN.isTerminal()).isFalse();
  }

  @Test
  void countOpenSumsEveryNonTerminalStatusOnly() {
    java.util.Map<Status, Long> counts = new java.util.EnumMap<>(Status.class);
    long expected = 0;
    for (Status status : Status.values()) {
      long n = 1L << status.ordinal();
      counts.put(status, n);
      expected += status.isTerminal() ? 0 : n;
    }
    assertThat(Status.countOpen(counts)).isEqualTo(expected).isEqualTo(1 + 2 + 4 + 8 + 16);
    assertThat(Status.countOpen(java.util.Map.of())).isZero();
  }

  @Test
  void aSendingRowCanNeverGoBackToQueued() {
    assertThat(StateMachine.allowedInto(Status.QUEUED)).containsExactly(Status.CLAIMED);
  }

  @Test
  void wireNamesRoundTripAndUnknownNamesAreRefusedWithTheValidList() {
    for (Status status : Status.values()) {
      assertThat(Status.fromWireName(status.wireName())).isEqualTo(status);
    }
    assertThatThrownBy(() -> Status.fromWireName("done"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'done'").hasMessageContaining("retryable_failed");
  }
}
