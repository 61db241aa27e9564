package dev.outboxreplay;

import dev.outboxreplay.internal.Arguments;
import dev.outboxreplay.internal.CanonicalJson;
import dev.outboxreplay.internal.CommandIdGenerator;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The accepting side of the outbox: turns an application intent into a durable row with a stable
 * command id and idempotency key, and nothing else. Sending is the replayer's job.
 *
 * <p>Thread-safe. Build one per store with {@link #builder(OutboxStore)}.
 *
 * @param <T> the store's transaction handle type (for H2: {@code java.sql.Connection})
 */
public final class Outbox<T> {
  /** Default largest canonical payload: 1 MiB. */
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20;
  /** Longest operation name ({@link OperationName#MAX_LENGTH}). */
  public static final int MAX_OPERATION_LENGTH = OperationName.MAX_LENGTH;
  /** Longest entity key. */
  public static final int MAX_ENTITY_KEY_LENGTH = 500;

  private final OutboxStore<T> store;
  private final Clock clock;
  private final CommandIdGenerator ids;
  private final IdempotencyKeyStrategy keyStrategy;
  private final int maxPayloadBytes;
  private final LongSupplier sessionVersion;
  private final FailureInjector failures;
  private final Runnable onAccepted;

  private Outbox(Builder<T> builder) {
    this.store = builder.store;
    this.clock = builder.clock;
    this.ids = new CommandIdGenerator(builder.clock, builder.random);
    this.keyStrategy = builder.keyStrategy;
    this.maxPayloadBytes = builder.maxPayloadBytes;
    this.sessionVersion = builder.sessionVersion;
    this.failures = builder.failures;
    this.onAccepted = builder.onAccepted;
  }

  /** A builder over {@code store} with the defaults documented on each setter. */
  public static <T> Builder<T> builder(OutboxStore<T> store) {
    return new Builder<>(Objects.requireNonNull(store, "store == null"));
  }

  /**
   * Accepts one command. When this returns, the row is durable as the store's durability mode
   * promises (the H2 store's default: it survives a process kill). Re-accepting the same command
   * id or key with the same intent returns the original record and writes nothing.
   *
   * @throws InvalidCommandException when the command is invalid; nothing written
   * @throws IdempotencyConflictException when its id or key was used with another intent
   * @throws OutboxStorageException when the store fails; nothing written, unless the failure
   *     left the commit's outcome unknown (the process serving a shared file went away during
   *     it), when the row may be stored. {@linkplain
   *     OutboxStorageException#retryable() Retryable} for a passing condition (the process
   *     serving a shared file went away, a lock race, a row lock not released in time): the same
   *     call, with the same command id, may be made again at once and is accepted once. Fatal
   *     otherwise (corrupt, foreign or newer file, no access).
   */
  public OutboxRecord accept(OutboxCommand command) {
    return write(List.of(prepare(command, "command"))).get(0);
  }

  /**
   * Accepts several commands atomically: all are written or none.
   *
   * @throws InvalidCommandException naming the index of the first invalid command; none written
   * @throws IdempotencyConflictException when any conflicts; none written
   */
  public List<OutboxRecord> acceptAll(List<OutboxCommand> commands) {
    return write(prepareAll(commands));
  }

  private List<OutboxRecord> write(List<PreparedCommand> prepared) {
    failures.at(FailurePoint.BEFORE_OUTBOX_WRITE);
    List<OutboxRecord> written = store.insert(prepared);
    failures.at(FailurePoint.AFTER_OUTBOX_WRITE);
    onAccepted.run();
    return written;
  }

  /**
   * Accepts one command inside the caller's open transaction on the same database, so that the
   * application's own state change and the outbox row commit or roll back together. The row is
   * durable only once the caller commits. The transaction is neither committed nor closed here;
   * the store's documentation says what to call after the commit (the H2 store: {@code
   * H2Database.afterCommit}).
   */
  public OutboxRecord accept(T transaction, OutboxCommand command) {
    Objects.requireNonNull(transaction, "transaction == null");
    return store.insert(transaction, List.of(prepare(command, "command"))).get(0);
  }

  /** Like {@link #acceptAll(List)} inside the caller's open transaction. */
  public List<OutboxRecord> acceptAll(T transaction, List<OutboxCommand> commands) {
    Objects.requireNonNull(transaction, "transaction == null");
    return store.insert(transaction, prepareAll(commands));
  }

  /**
   * Checks {@code commands} as {@link #acceptAll(List)} checks them before writing (names,
   * payload, its size limit, the derived key), and writes nothing: for a caller that must refuse
   * bad input before it opens or creates a database at all.
   *
   * @throws InvalidCommandException naming the index of the first invalid command
   */
  public void check(List<OutboxCommand> commands) {
    prepareAll(commands);
  }

  /**
   * {@link #check} with the default payload limit and key strategy, without a store.
   *
   * @throws InvalidCommandException naming the index of the first invalid command
   */
  public static void checkWithDefaults(List<OutboxCommand> commands) {
    new Builder<Object>(null).build().check(commands);
  }

  /** The store this outbox writes to. */
  public OutboxStore<T> store() {
    return store;
  }

  private List<PreparedCommand> prepareAll(List<OutboxCommand> commands) {
    Objects.requireNonNull(commands, "commands == null");
    List<PreparedCommand> prepared = new ArrayList<>(commands.size());
    for (int i = 0; i < commands.size(); i++) {
      prepared.add(prepare(commands.get(i), "commands[" + i + "]"));
    }
    return prepared;
  }

  private PreparedCommand prepare(OutboxCommand command, String where) {
    if (command == null) {
      throw new InvalidCommandException(where, "is null");
    }
    String operation = requireText(command.operation(), where + ".operation", MAX_OPERATION_LENGTH);
    if (!OperationName.isValid(operation)) {
      throw new InvalidCommandException(where + ".operation", "must be " + OperationName.GRAMMAR);
    }
    String entityKey =
        requireText(command.entityKey(), where + ".entityKey", MAX_ENTITY_KEY_LENGTH);
    byte[] canonical;
    try {
      canonical = command.payload() instanceof OutboxCommand.JsonText text
          ? CanonicalJson.fromText(text.json())
          : CanonicalJson.fromValue(command.payload());
    } catch (IllegalArgumentException e) {
      throw new InvalidCommandException(where + ".payload", e.getMessage(), e);
    }
    if (canonical.length > maxPayloadBytes) {
      throw new InvalidCommandException(where + ".payload", "canonical JSON is "
          + canonical.length + " bytes, over the limit of " + maxPayloadBytes);
    }
    CommandId id = command.commandId() != null ? command.commandId() : ids.next();
    IdempotencyKey key = command.idempotencyKey();
    if (key == null) {
      try {
        key = new IdempotencyKey(keyStrategy.keyFor(operation, entityKey, id));
      } catch (IllegalArgumentException e) {
        throw new InvalidCommandException(where + ".idempotencyKey", "derived key is invalid: "
            + e.getMessage(), e);
      }
    }
    Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
    return new PreparedCommand(id, key, operation, entityKey, Payload.ofCanonicalBytes(canonical),
        sessionVersion.getAsLong(), now);
  }

  private static String requireText(String value, String field, int maxLength) {
    if (value == null || value.isBlank()) {
      throw new InvalidCommandException(field, "is blank");
    }
    if (value.length() > maxLength) {
      throw new InvalidCommandException(field, "is " + value.length()
          + " characters, more than " + maxLength);
    }
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw new InvalidCommandException(field, "has a control character at index " + i);
      }
    }
    return value;
  }

  /** Configures an {@link Outbox}; each setter validates its argument and names it on error. */
  public static final class Builder<T> {
    private final OutboxStore<T> store;
    private Clock clock = Clock.systemUTC();
    private RandomGenerator random = new SecureRandom();
    private IdempotencyKeyStrategy keyStrategy = IdempotencyKeyStrategy.DEFAULT;
    private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
    private LongSupplier sessionVersion = () -> 0L;
    private FailureInjector failures = FailureInjector.NONE;
    private Runnable onAccepted = () -> { };

    private Builder(OutboxStore<T> store) {
      this.store = store; // null only for checkWithDefaults, which writes nothing
    }

    /** Time source for ids and accept times. Default: the UTC system clock. */
    public Builder<T> clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /** Randomness for command ids. Default: {@link SecureRandom}. Seed it for simulations. */
    public Builder<T> random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random == null");
      return this;
    }

    /** How keys are derived. Default: {@link IdempotencyKeyStrategy#DEFAULT}. */
    public Builder<T> idempotencyKeyStrategy(IdempotencyKeyStrategy strategy) {
      this.keyStrategy = Objects.requireNonNull(strategy, "idempotencyKeyStrategy == null");
      return this;
    }

    /** Largest canonical payload in bytes. Default {@link #DEFAULT_MAX_PAYLOAD_BYTES} (1 MiB). */
    public Builder<T> maxPayloadBytes(int maxPayloadBytes) {
      this.maxPayloadBytes = Arguments.atLeastOne("maxPayloadBytes", maxPayloadBytes);
      return this;
    }

    /**
     * Called after each {@link Outbox#accept(OutboxCommand)} and {@link Outbox#acceptAll(List)}
     * committed, e.g. {@code replayer::onAccepted}. Not called for accepts inside a caller's
     * transaction: call the replayer after your own commit. Must return quickly.
     */
    public Builder<T> onAccepted(Runnable onAccepted) {
      this.onAccepted = Objects.requireNonNull(onAccepted, "onAccepted == null");
      return this;
    }

    /** Failure points for tests. Default {@link FailureInjector#NONE}. */
    public Builder<T> failureInjector(FailureInjector failures) {
      this.failures = Objects.requireNonNull(failures, "failureInjector == null");
      return this;
    }

    /** Session version stamped on each accepted row. Default: always 0. */
    public Builder<T> sessionVersion(LongSupplier sessionVersion) {
      this.sessionVersion = Objects.requireNonNull(sessionVersion, "sessionVersion == null");
      return this;
    }

    public Outbox<T> build() {
      return new Outbox<>(this);
    }
  }
}
