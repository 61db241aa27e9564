package dev.outboxreplay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.Status;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The entity-order decisions, for every status and each side of each boundary. */
class EntityOrderTest {
  private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");
  private static final Duration MS = Duration.ofMillis(1);

  @Test
  void aDueRowIsClaimedOnlyWhenNoEarlierCommandOfItsEntityIsOpen() {
    assertThat(EntityOrder.mayClaim(false)).isTrue();
    assertThat(EntityOrder.mayClaim(true)).as("it waits behind its entity's head").isFalse();
  }

  @Test
  void onlyAQueuedCommandMayFollowOneInFlight() {
    for (Status next : Status.values()) {
      assertThat(EntityOrder.mayFollow(next, NOW, 3, 3, NOW)).as("next in %s", next)
          .isEqualTo(next == Status.QUEUED);
    }
  }

  @Test
  void aSuccessorMustBeDueAtTheClaim() {
    assertThat(EntityOrder.mayFollow(Status.QUEUED, NOW.minus(MS), 3, 3, NOW)).isTrue();
    assertThat(EntityOrder.mayFollow(Status.QUEUED, NOW, 3, 3, NOW)).as("due now").isTrue();
    assertThat(EntityOrder.mayFollow(Status.QUEUED, NOW.plus(MS), 3, 3, NOW))
        .as("due a millisecond later").isFalse();
  }

  @Test
  void aSuccessorMustBeOfTheCurrentSessionOrALaterOne() {
    assertThat(EntityOrder.mayFollow(Status.QUEUED, NOW, 2, 3, NOW)).as("older session")
        .isFalse();
    assertThat(EntityOrder.mayFollow(Status.QUEUED, NOW, 3, 3, NOW)).as("current").isTrue();
    assertThat(EntityOrder.mayFollow(Status.QUEUED, NOW, 4, 3, NOW)).as("later").isTrue();
  }

  @Test
  void theHeadPassesOnOnlyWhenItsCommandEnds() {
    for (Status to : Status.values()) {
      assertThat(EntityOrder.endsHead(to)).as("to %s", to)
          .isEqualTo(to == Status.ACKED || to == Status.CONFLICT || to == Status.REJECTED);
    }
  }
}
