package dev.outboxreplay;

import dev.outboxreplay.internal.Arguments;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exactly-once state advancement for messages delivered at least once. {@link #receive} is the
 * only way in: it checks the processed inbox for (scope, message id) before the application's
 * {@link InboxConsumer} may run, runs it at most once per message whose effects commit, and then
 * projects the staged result with the {@link InboxProjector}. Transport and projection may repeat;
 * consumption never does.
 *
 * <p>Thread-safe; several threads and processes may receive the same message at once.
 *
 * @param <T> the store's transaction handle (for H2: {@code java.sql.Connection})
 */
public final class Inbox<T> {
  private static final Logger LOG = LoggerFactory.getLogger(Inbox.class);
  /** Default largest message accepted by {@link #receive}: 1 MiB. */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 1 << 20;
  /** Longest scope and message id, in characters. */
  public static final int MAX_ID_LENGTH = 200;
  private static final int RECOVERY_BATCH = 500;

  private final InboxStore<T> store;
  private final InboxConsumer<T> consumer;
  private final InboxProjector projector;
  private final Clock clock;
  private final FailureInjector failures;
  private final int maxMessageBytes;

  private Inbox(Builder<T> b) {
    this.store = b.store;
    this.consumer = b.consumer;
    this.projector = b.projector;
    this.clock = b.clock;
    this.failures = b.failures;
    this.maxMessageBytes = b.maxMessageBytes;
  }

  /** A builder; the store, the consumer and the projector are required. */
  public static <T> Builder<T> builder(InboxStore<T> store, InboxConsumer<T> consumer,
      InboxProjector projector) {
    return new Builder<>(store, consumer, projector);
  }

  /**
   * Receives one delivery. If the message was consumed before, the consumer does not run (a staged
   * result still waiting is projected now). Otherwise the consumer runs once inside the store's
   * transaction, the staged result commits with its effects, and is projected.
   *
   * <p>When this returns {@code CONSUMED}, the consumption is durable; a projection that failed
   * is retried by the next delivery or by {@link #recoverPending()}.
   *
   * @throws IllegalArgumentException for a blank scope, a null, blank or over-long id, or a
   *     message over the size limit; nothing written
   * @throws InboxConsumerException when the consumer threw; nothing written
   * @throws OutboxStorageException when the store fails; {@linkplain
   *     OutboxStorageException#retryable() retryable} for a passing condition (the process serving
   *     a shared file went away, a row lock not released in time): receive the same delivery
   *     again at once; a consume transaction that failed was rolled back and never committed, so
   *     the consumer runs again only for a message that was not consumed. Fatal otherwise
   *     (corrupt, foreign or newer file, no access).
   */
  public ReceiveResult receive(String scope, String messageId, byte[] bytes) {
    InboxMessage message = validated(scope, messageId, bytes);
    Optional<InboxEntry> existing = store.find(scope, messageId);
    if (existing.isPresent()) {
      return duplicate(existing.get(), message);
    }
    Optional<InboxEntry> staged = store.consumeOnce(message, clock.instant(),
        transaction -> Objects.requireNonNull(consumer.consume(transaction, message),
            "InboxConsumer returned null; return an empty array when nothing is to be projected"));
    if (staged.isEmpty()) {
      return duplicate(store.find(scope, messageId).orElseThrow(() -> new OutboxStorageException(
          "inbox row for '" + messageId + "' in scope '" + scope + "' vanished after a race")),
          message);
    }
    failures.at(FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION);
    return new ReceiveResult(ReceiveResult.Outcome.CONSUMED, project(staged.get()));
  }

  /**
   * Projects every row that was consumed but not projected (after a crash, or after a projection
   * failed), without consuming anything again. Rows whose staged result is missing become
   * integrity failures. Run by {@link Builder#build()}; call it again whenever convenient.
   *
   * @return how many rows were projected by this call
   */
  public int recoverPending() {
    int projected = 0;
    List<InboxEntry> batch;
    Set<String> failedThisRun = new HashSet<>();
    do {
      batch = store.list(InboxEntry.State.STAGED, RECOVERY_BATCH);
      int progress = 0;
      for (InboxEntry entry : batch) {
        String key = entry.scope() + "\u0000" + entry.messageId();
        if (failedThisRun.contains(key)) {
          continue;
        }
        if (project(entry)) {
          projected++;
          progress++;
        } else {
          failedThisRun.add(key);
        }
      }
      if (progress == 0) {
        break;
      }
    } while (batch.size() == RECOVERY_BATCH);
    return projected;
  }

  /** Integrity failures, without payloads or plaintext; message ids are hashed. */
  public List<InboxDiagnostic> integrityFailures() {
    List<InboxDiagnostic> result = new ArrayList<>();
    for (InboxEntry e : store.list(InboxEntry.State.INTEGRITY_FAILURE, Integer.MAX_VALUE)) {
      result.add(new InboxDiagnostic(e.scope(), hashOf(e.messageId()), e.consumedAt(),
          "consumed and committed, not projected, staged result missing"));
    }
    return result;
  }

  /**
   * Message ids delivered again with other bytes than the ones consumed, most recent first:
   * scope, hashed id, time of the latest such delivery and how many there were; no payload.
   */
  public List<InboxDiagnostic> mismatches() {
    List<InboxDiagnostic> result = new ArrayList<>();
    for (InboxStore.Mismatch m : store.listMismatches(Integer.MAX_VALUE)) {
      result.add(new InboxDiagnostic(m.scope(), hashOf(m.messageId()), m.lastAt(),
          "redelivered " + m.deliveries() + " time(s) with other bytes than the consumed "
              + "message; the consumer did not run for them"));
    }
    return result;
  }

  /** The store, for operators and diagnostics. */
  public InboxStore<T> store() {
    return store;
  }

  /**
   * A delivery of a message already in the inbox: the consumer does not run. Bytes other than
   * the consumed ones are recorded and reported as {@code DUPLICATE_MISMATCH}.
   */
  private ReceiveResult duplicate(InboxEntry entry, InboxMessage delivered) {
    ReceiveResult result = duplicate(entry);
    if (entry.messageSha256() == null
        || MessageDigest.isEqual(entry.messageSha256(), delivered.sha256())) {
      return result;
    }
    store.recordMismatch(entry.scope(), entry.messageId(), clock.instant());
    LOG.warn("inbox message {} in scope {} was delivered again with other bytes; not consumed",
        hashOf(entry.messageId()), entry.scope());
    return result.outcome() == ReceiveResult.Outcome.DUPLICATE
        ? new ReceiveResult(ReceiveResult.Outcome.DUPLICATE_MISMATCH, result.projected())
        : result;
  }

  private ReceiveResult duplicate(InboxEntry entry) {
    return switch (entry.state()) {
      case PROJECTED -> new ReceiveResult(ReceiveResult.Outcome.DUPLICATE, true);
      case INTEGRITY_FAILURE -> new ReceiveResult(ReceiveResult.Outcome.INTEGRITY_FAILURE, false);
      case STAGED -> {
        boolean projected = project(entry);
        Optional<InboxEntry> now = store.find(entry.scope(), entry.messageId());
        boolean broken = now.isPresent()
            && now.get().state() == InboxEntry.State.INTEGRITY_FAILURE;
        yield new ReceiveResult(broken ? ReceiveResult.Outcome.INTEGRITY_FAILURE
            : ReceiveResult.Outcome.DUPLICATE, projected);
      }
    };
  }

  /** Projects a staged row and marks it; false when it could not (it stays staged or broken). */
  private boolean project(InboxEntry entry) {
    Instant now = clock.instant();
    if (entry.stagedResult() == null) {
      if (!store.markIntegrityFailure(entry.scope(), entry.messageId(), now)) {
        return false; // projected meanwhile by another receiver, or already marked
      }
      LOG.error("inbox integrity failure in scope '{}': message {} was consumed but its staged "
          + "result is missing; it will not be consumed again", entry.scope(),
          hashOf(entry.messageId()));
      return false;
    }
    try {
      projector.project(entry.scope(), entry.messageId(), entry.stagedResult());
    } catch (Exception e) {
      LOG.warn("projection of message {} in scope '{}' failed; it stays staged and is retried",
          hashOf(entry.messageId()), entry.scope(), e);
      return false;
    }
    failures.at(FailurePoint.AFTER_PROJECTION_BEFORE_MARK);
    store.markProjected(entry.scope(), entry.messageId(), clock.instant());
    return true;
  }

  private InboxMessage validated(String scope, String messageId, byte[] bytes) {
    if (scope == null || scope.isBlank()) {
      throw new IllegalArgumentException("scope is blank");
    }
    if (scope.length() > MAX_ID_LENGTH) {
      throw new IllegalArgumentException("scope is " + scope.length() + " characters, more than "
          + MAX_ID_LENGTH);
    }
    if (messageId == null || messageId.isBlank()) {
      throw new IllegalArgumentException("messageId is " + (messageId == null ? "null" : "blank"));
    }
    if (messageId.length() > MAX_ID_LENGTH) {
      throw new IllegalArgumentException("messageId is " + messageId.length()
          + " characters, more than " + MAX_ID_LENGTH);
    }
    if (bytes == null) {
      throw new IllegalArgumentException("message bytes are null");
    }
    if (bytes.length > maxMessageBytes) {
      throw new IllegalArgumentException("message is " + bytes.length
          + " bytes, over the limit of " + maxMessageBytes);
    }
    return new InboxMessage(scope, messageId, bytes);
  }

  /** First 16 hex digits of SHA-256 of a message id, for logs and diagnostics. */
  static String hashOf(String messageId) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(messageId.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** Configures an {@link Inbox}. */
  public static final class Builder<T> {
    private final InboxStore<T> store;
    private final InboxConsumer<T> consumer;
    private final InboxProjector projector;
    private Clock clock = Clock.systemUTC();
    private FailureInjector failures = FailureInjector.NONE;
    private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;

    private Builder(InboxStore<T> store, InboxConsumer<T> consumer, InboxProjector projector) {
      this.store = Objects.requireNonNull(store, "store == null");
      this.consumer = Objects.requireNonNull(consumer, "consumer == null");
      this.projector = Objects.requireNonNull(projector, "projector == null");
    }

    /** Time source for row times. Default: the UTC system clock. */
    public Builder<T> clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /** Failure points for tests. Default {@link FailureInjector#NONE}. */
    public Builder<T> failureInjector(FailureInjector failures) {
      this.failures = Objects.requireNonNull(failures, "failureInjector == null");
      return this;
    }

    /** Largest message {@link #receive} accepts. Default 1 MiB. */
    public Builder<T> maxMessageBytes(int maxMessageBytes) {
      this.maxMessageBytes = Arguments.atLeastOne("maxMessageBytes", maxMessageBytes);
      return this;
    }

    /** Builds the inbox and runs {@link Inbox#recoverPending()} once, as at every open. */
    public Inbox<T> build() {
      Inbox<T> inbox = new Inbox<>(this);
      inbox.recoverPending();
      return inbox;
    }
  }
}
