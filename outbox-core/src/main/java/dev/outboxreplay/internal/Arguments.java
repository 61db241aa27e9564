package dev.outboxreplay.internal;

import java.time.Duration;
import java.util.Objects;

/** Argument checks shared by the builders of every module; not a public API. */
public final class Arguments {
  private Arguments() {}

  /**
   * @return {@code value}
   * @throws NullPointerException when it is null
   * @throws IllegalArgumentException {@code "<name> <= 0: <value>"} when it is zero or negative
   */
  public static Duration positive(String name, Duration value) {
    Objects.requireNonNull(value, name + " == null");
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " <= 0: " + value);
    }
    return value;
  }

  /**
   * @return {@code value}
   * @throws NullPointerException when it is null
   * @throws IllegalArgumentException {@code "<name> < 0: <value>"} when it is negative
   */
  public static Duration notNegative(String name, Duration value) {
    Objects.requireNonNull(value, name + " == null");
    if (value.isNegative()) {
      throw new IllegalArgumentException(name + " < 0: " + value);
    }
    return value;
  }

  /**
   * @return {@code value}
   * @throws IllegalArgumentException {@code "<name> < 1: <value>"} when it is below 1
   */
  public static int atLeastOne(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " < 1: " + value);
    }
    return value;
  }
}
