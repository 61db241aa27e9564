package dev.outboxreplay;

import dev.outboxreplay.internal.CommandIdGenerator;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * The identity of one accepted intent: a version 7 (time-ordered) UUID assigned once at accept and
 * reused by every attempt. Time order makes new rows append to the primary-key index.
 *
 * @param value the UUID; never null
 */
public record CommandId(UUID value) implements Comparable<CommandId> {
  /** Ids for {@link #generate()}: the system clock and a secure random source. */
  private static final CommandIdGenerator GENERATED =
      new CommandIdGenerator(Clock.systemUTC(), new SecureRandom());

  public CommandId {
    Objects.requireNonNull(value, "value == null");
  }

  /**
   * A new time-ordered id, as {@code accept} assigns one. Choose it before the first try when a
   * failed accept may have committed after all (an outcome-unknown commit): accepting again with
   * the same id ({@link OutboxCommand#withCommandId}) then finds the stored row instead of
   * queueing the intent twice. Thread-safe.
   */
  public static CommandId generate() {
    return GENERATED.next();
  }

  /**
   * Parses the canonical 36-character UUID form.
   *
   * @throws IllegalArgumentException when {@code text} is not a UUID
   */
  public static CommandId parse(String text) {
    Objects.requireNonNull(text, "command id == null");
    try {
      return new CommandId(UUID.fromString(text));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("command id is not a UUID: '" + text + "'", e);
    }
  }

  /** The millisecond timestamp a version 7 id carries; undefined for other UUID versions. */
  public Instant timestamp() {
    return Instant.ofEpochMilli(value.getMostSignificantBits() >>> 16);
  }

  @Override
  public int compareTo(CommandId other) {
    int high = Long.compareUnsigned(
        value.getMostSignificantBits(), other.value.getMostSignificantBits());
    return high != 0 ? high : Long.compareUnsigned(
        value.getLeastSignificantBits(), other.value.getLeastSignificantBits());
  }

  @Override
  public String toString() {
    return value.toString();
  }
}
