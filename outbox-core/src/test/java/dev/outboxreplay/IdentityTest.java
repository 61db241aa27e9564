package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.internal.CommandIdGenerator;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class IdentityTest {
  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

  @Test
  void commandIdsAreVersion7CarryTheirTimeAndIncreaseEvenWhenTheClockStalls() {
    CommandIdGenerator ids = new CommandIdGenerator(
        Clock.fixed(T0, ZoneOffset.UTC), new SplittableRandom(1));
    List<CommandId> generated = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      generated.add(ids.next());
    }
    for (int i = 1; i < generated.size(); i++) {
      assertThat(generated.get(i)).isGreaterThan(generated.get(i - 1));
    }
    CommandId first = generated.get(0);
    assertThat(first.value().version()).isEqualTo(7);
    assertThat(first.value().variant()).isEqualTo(2);
    assertThat(first.timestamp()).isEqualTo(T0);
    assertThat(CommandId.parse(first.toString())).isEqualTo(first);
  }

  @Test
  void commandIdsStayOrderedWhenTheClockStepsBack() {
    Instant[] now = {T0};
    Clock clock = new Clock() {
      @Override public Instant instant() {
        return now[0];
      }

      @Override public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override public Clock withZone(java.time.ZoneId zone) {
        return this;
      }
    };
    CommandIdGenerator ids = new CommandIdGenerator(clock, new SplittableRandom(2));
    CommandId before = ids.next();
    now[0] = T0.minusSeconds(5);
    assertThat(ids.next()).isGreaterThan(before);
  }

  @Test
  void sameSeedGivesTheSameIds() {
    Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    CommandIdGenerator a = new CommandIdGenerator(clock, new SplittableRandom(9));
    CommandIdGenerator b = new CommandIdGenerator(clock, new SplittableRandom(9));
    assertThat(a.next()).isEqualTo(b.next());
  }

  @Test
  void malformedCommandIdTextIsRefusedWithTheText() {
    assertThatThrownBy(() -> CommandId.parse("not-a-uuid"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not-a-uuid");
  }

  @Test
  void idempotencyKeysArePrintableAsciiUpTo255Characters() {
    assertThat(new IdempotencyKey("a".repeat(255)).value()).hasSize(255);
    assertThat(new IdempotencyKey(" ~").value()).isEqualTo(" ~");
    assertThatThrownBy(() -> new IdempotencyKey("a".repeat(256)))
        .hasMessageContaining("256 characters");
    assertThatThrownBy(() -> new IdempotencyKey("")).hasMessageContaining("empty");
    assertThatThrownBy(() -> new IdempotencyKey("caf\u00e9"))
        .hasMessageContaining("U+00E9").hasMessageContaining("index 3");
    assertThatThrownBy(() -> new IdempotencyKey("a\nb")).hasMessageContaining("U+000A");
  }

  @Test
  void defaultKeyIsOperationEntityAndCommandId() {
    CommandId id = CommandId.parse("01890a5d-ac96-774b-bcce-b302099a8057");
    assertThat(IdempotencyKeyStrategy.DEFAULT.keyFor("note.put", "n-1", id))
        .isEqualTo("note.put:n-1:01890a5d-ac96-774b-bcce-b302099a8057");
  }
}
