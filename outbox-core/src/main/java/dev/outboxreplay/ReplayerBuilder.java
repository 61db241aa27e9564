package dev.outboxreplay;

import dev.outboxreplay.internal.Arguments;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Configures a {@link Replayer}; each setter validates its argument and names it in the message.
 * Obtain one from {@link Replayer#builder}.
 *
 * @param <T> the store's transaction handle
 */
public final class ReplayerBuilder<T> {
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(60);
  public static final int DEFAULT_BATCH_SIZE = 32;
  public static final int DEFAULT_CONCURRENCY = 4;
  public static final Duration DEFAULT_HOLD_INTERVAL = Duration.ofSeconds(30);
  public static final Duration DEFAULT_AUDIT_RETENTION = Duration.ofDays(30);
  /** Default for {@link #tombstoneAfter}. */
  public static final Duration DEFAULT_TOMBSTONE_AFTER = Duration.ofDays(1);
  /** Added to the retry policy's key retention for the default {@link #deleteTombstonesAfter}. */
  public static final Duration TOMBSTONE_DELETE_MARGIN = Duration.ofDays(1);
  public static final Duration DEFAULT_IDLE_LOOK_INTERVAL = Duration.ofSeconds(2);

  final OutboxStore<T> store;
  final Transport transport;
  SessionRuntime session = SessionRuntime.ANONYMOUS;
  ResponseApplier<T> applier = ResponseApplier.none();
  RetryPolicy retry;
  Clock clock = Clock.systemUTC();
  String owner = "replayer-" + ProcessHandle.current().pid() + "-"
      + Integer.toHexString(System.identityHashCode(this));
  Duration lease = DEFAULT_LEASE;
  int batchSize = DEFAULT_BATCH_SIZE;
  int concurrency = DEFAULT_CONCURRENCY;
  StaleSessionPolicy stalePolicy = StaleSessionPolicy.HOLD;
  ForbiddenPolicy forbiddenPolicy = ForbiddenPolicy.REJECT_COMMAND;
  Duration holdInterval = DEFAULT_HOLD_INTERVAL;
  Duration auditRetention = DEFAULT_AUDIT_RETENTION;
  Duration tombstoneAfter = DEFAULT_TOMBSTONE_AFTER;
  Duration deleteTombstonesAfter;
  Duration idleLookInterval = DEFAULT_IDLE_LOOK_INTERVAL;
  final List<OutboxListener> listeners = new ArrayList<>();
  FailureInjector failures = FailureInjector.NONE;
  ConnectivityMonitor connectivity = ConnectivityMonitor.NONE;

  ReplayerBuilder(OutboxStore<T> store, Transport transport) {
    this.store = Objects.requireNonNull(store, "store == null");
    this.transport = Objects.requireNonNull(transport, "transport == null");
  }

  /** Session fence, tenant and credentials. Default {@link SessionRuntime#ANONYMOUS}. */
  public ReplayerBuilder<T> session(SessionRuntime session) {
    this.session = Objects.requireNonNull(session, "session == null");
    return this;
  }

  /** Applies acked answers to local state in the ack's transaction. Default: none. */
  public ReplayerBuilder<T> responseApplier(ResponseApplier<T> applier) {
    this.applier = Objects.requireNonNull(applier, "responseApplier == null");
    return this;
  }

  /** Back-off and limits. Default {@link RetryPolicy#defaults} with a {@code SecureRandom}. */
  public ReplayerBuilder<T> retryPolicy(RetryPolicy retry) {
    this.retry = Objects.requireNonNull(retry, "retryPolicy == null");
    return this;
  }

  public ReplayerBuilder<T> clock(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock == null");
    return this;
  }

  /** Name recorded as claim owner. Default: process id and an instance hash. */
  public ReplayerBuilder<T> owner(String owner) {
    if (owner == null || owner.isBlank() || owner.length() > 200) {
      throw new IllegalArgumentException("owner must be 1-200 characters: " + owner);
    }
    this.owner = owner;
    return this;
  }

  /**
   * Claim lease. Keep it at least twice the transport's call timeout: a row marked sending ahead
   * of a free sender may wait for one call before its own, and one whose lease is half spent by
   * then is not sent but claimed afresh. Default 60 s.
   */
  public ReplayerBuilder<T> lease(Duration lease) {
    this.lease = Arguments.positive("lease", lease);
    return this;
  }

  /** Rows claimed at a time. Default 32. */
  public ReplayerBuilder<T> batchSize(int batchSize) {
    this.batchSize = Arguments.atLeastOne("batchSize", batchSize);
    return this;
  }

  /** Sends in flight at once (different entities). Default 4. */
  public ReplayerBuilder<T> concurrency(int concurrency) {
    this.concurrency = Arguments.atLeastOne("concurrency", concurrency);
    return this;
  }

  /** Commands of an older session version. Default {@link StaleSessionPolicy#HOLD}. */
  public ReplayerBuilder<T> staleSessionPolicy(StaleSessionPolicy policy) {
    this.stalePolicy = Objects.requireNonNull(policy, "staleSessionPolicy == null");
    return this;
  }

  /** What a 403 means. Default {@link ForbiddenPolicy#REJECT_COMMAND}. */
  public ReplayerBuilder<T> forbiddenPolicy(ForbiddenPolicy policy) {
    this.forbiddenPolicy = Objects.requireNonNull(policy, "forbiddenPolicy == null");
    return this;
  }

  /**
   * Wait before looking again at a held, in-progress or processing command, and between checks
   * of a paused session. Default 30 s.
   */
  public ReplayerBuilder<T> holdInterval(Duration holdInterval) {
    this.holdInterval = Arguments.positive("holdInterval", holdInterval);
    return this;
  }

  /**
   * How often a started replayer with nothing due looks at the store again, to notice commands
   * that other processes sharing the file accepted (their {@link Replayer#onAccepted()} reaches
   * only their own replayer). One indexed query per look. Default 2 s; {@link Duration#ZERO}
   * turns it off, for a file only this process writes.
   */
  public ReplayerBuilder<T> idleLookInterval(Duration idleLookInterval) {
    Objects.requireNonNull(idleLookInterval, "idleLookInterval == null");
    if (idleLookInterval.isNegative()) {
      throw new IllegalArgumentException("idleLookInterval is negative: " + idleLookInterval);
    }
    this.idleLookInterval = idleLookInterval;
    return this;
  }

  /** How long audit entries are kept. Default 30 days. */
  public ReplayerBuilder<T> auditRetention(Duration auditRetention) {
    this.auditRetention = Arguments.positive("auditRetention", auditRetention);
    return this;
  }

  /**
   * How long after a command ended (acked, conflict, rejected) it keeps its payload, response body
   * and error message; then it becomes a tombstone ({@link OutboxStore#tombstoneEnded}). Checked
   * at most once an hour, after a pass. Default 1 day.
   */
  public ReplayerBuilder<T> tombstoneAfter(Duration tombstoneAfter) {
    this.tombstoneAfter = Arguments.positive("tombstoneAfter", tombstoneAfter);
    return this;
  }

  /**
   * How long after a command ended its tombstone is deleted ({@link OutboxStore#deleteTombstones}).
   * Default: the retry policy's key retention plus 1 day. {@link #build()} refuses less than the
   * key retention: the tombstone is what keeps a late accept of the same key from being sent
   * again while the receiver still remembers it. Checked at most once an hour, after a pass.
   */
  public ReplayerBuilder<T> deleteTombstonesAfter(Duration deleteTombstonesAfter) {
    this.deleteTombstonesAfter =
        Arguments.positive("deleteTombstonesAfter", deleteTombstonesAfter);
    return this;
  }

  /**
   * Adds a listener. Each call adds one more (metrics and a UI status line, say); every event
   * goes to each in the order added, on the replayer's thread, and one that throws is logged and
   * does not keep the event from the others (see {@link OutboxListener#all}). Default: none.
   */
  public ReplayerBuilder<T> listener(OutboxListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener == null"));
    return this;
  }

  public ReplayerBuilder<T> failureInjector(FailureInjector failures) {
    this.failures = Objects.requireNonNull(failures, "failureInjector == null");
    return this;
  }

  /** Reports network-up. Default {@link ConnectivityMonitor#NONE}. */
  public ReplayerBuilder<T> connectivityMonitor(ConnectivityMonitor connectivity) {
    this.connectivity = Objects.requireNonNull(connectivity, "connectivityMonitor == null");
    return this;
  }

  public Replayer<T> build() {
    if (retry == null) {
      retry = RetryPolicy.defaults(new java.security.SecureRandom());
    }
    deleteTombstonesAfter =
        tombstoneDeletionAge(deleteTombstonesAfter, tombstoneAfter, retry.keyRetention());
    return new Replayer<>(this);
  }

  /**
   * The age at which tombstones are deleted: {@code requested}, or when null the key retention
   * plus {@link #TOMBSTONE_DELETE_MARGIN}. Also used by tools that apply the retention on demand.
   *
   * @throws IllegalArgumentException when it is below the key retention (until the receiver
   *     forgets a key, the tombstone is what keeps a late accept with it from being sent again)
   *     or below {@code tombstoneAfter}
   */
  public static Duration tombstoneDeletionAge(Duration requested, Duration tombstoneAfter,
      Duration keyRetention) {
    Duration age = requested != null ? requested : keyRetention.plus(TOMBSTONE_DELETE_MARGIN);
    if (age.compareTo(keyRetention) < 0 || age.compareTo(tombstoneAfter) < 0) {
      throw new IllegalArgumentException("the tombstone deletion age (" + age
          + ") must be at least the key retention (" + keyRetention
          + ") and the tombstone age (" + tombstoneAfter + "): until the receiver forgets a "
          + "key, the tombstone is what keeps a late accept with it from being sent again");
    }
    return age;
  }
}
