package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboxListenersTest {
  private static final OutboxListener.Transition TRANSITION = new OutboxListener.Transition(
      CommandId.generate(), new IdempotencyKey("k-1"), "note.put", "note-1", Status.SENDING,
      Status.ACKED, 7,
      Reason.ACKED, Instant.EPOCH);

  @Test
  void everyEventReachesEachListenerInOrderAndOneThatThrowsStopsNoOther() {
    List<String> seen = new ArrayList<>();
    OutboxListener first = recording("first", seen);
    OutboxListener throwing = new OutboxListener() {
      @Override
      public void onTransition(Transition t) {
        seen.add("throwing");
        throw new IllegalStateException("a listener's own bug");
      }

      @Override
      public void onReplayPaused(Reason reason) {
        throw new IllegalStateException("a listener's own bug");
      }
    };
    OutboxListener last = recording("last", seen);
    OutboxListener all = OutboxListener.all(List.of(first, throwing, last));

    all.onTransition(TRANSITION);
    all.onReplayPaused(Reason.OFFLINE);
    all.onPassCompleted(null, Duration.ofMillis(3));

    assertThat(seen).containsExactly("first:acked", "throwing", "last:acked",
        "first:paused offline", "last:paused offline", "first:pass", "last:pass");
  }

  @Test
  void oneListenerIsItselfAndNullsAreRefused() {
    OutboxListener only = recording("only", new ArrayList<>());
    assertThat(OutboxListener.all(List.of(only))).isSameAs(only);
    assertThat(OutboxListener.all(List.of())).isSameAs(OutboxListener.NONE);
    assertThatThrownBy(() -> OutboxListener.all(Arrays.asList(only, null)))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> OutboxListener.all(null)).isInstanceOf(NullPointerException.class);
  }

  private static OutboxListener recording(String name, List<String> seen) {
    return new OutboxListener() {
      @Override
      public void onTransition(Transition t) {
        seen.add(name + ":" + t.to().name().toLowerCase());
      }

      @Override
      public void onReplayPaused(Reason reason) {
        seen.add(name + ":paused " + reason.name().toLowerCase());
      }

      @Override
      public void onPassCompleted(PassSummary summary, Duration took) {
        seen.add(name + ":pass");
      }
    };
  }
}
