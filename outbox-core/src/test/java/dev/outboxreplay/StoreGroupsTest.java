package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The store SPI is its three groups: {@link OutboxStore} adds no row operation of its own, and
 * each operation belongs to exactly one group, so that a store implementer and a reader of the
 * SPI see from its group who calls it.
 */
class StoreGroupsTest {
  private static final List<Class<?>> GROUPS =
      List.of(ReplayRows.class, RetentionRows.class, OperatorRows.class);

  private static Set<String> operations(Class<?> type) {
    return Arrays.stream(type.getDeclaredMethods())
        .filter(m -> !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic())
        .map(Method::getName).collect(Collectors.toSet());
  }

  @Test
  void outboxStoreIsTheThreeGroupsAndAddsOnlyClose() {
    assertThat(OutboxStore.class.getInterfaces())
        .contains(ReplayRows.class, RetentionRows.class, OperatorRows.class);
    assertThat(operations(OutboxStore.class)).containsExactly("close");
  }

  @Test
  void everyOperationBelongsToOneGroupOnly() {
    Set<String> seen = new HashSet<>();
    for (Class<?> group : GROUPS) {
      for (String operation : operations(group)) {
        assertThat(seen.add(operation)).as("%s is in two groups", operation).isTrue();
      }
    }
    assertThat(seen).contains("insert", "claim", "complete", "tombstoneEnded", "requeue",
        "countByStatus");
  }
}
