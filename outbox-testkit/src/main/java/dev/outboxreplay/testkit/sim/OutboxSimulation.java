package dev.outboxreplay.testkit.sim;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.ResponseApplier;
import dev.outboxreplay.RetryPolicy;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.testkit.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One simulated schedule of the real outbox engine: accepts, replay passes of one or two
 * replayers sharing the file, a {@link SimulatedNetwork} that loses, holds, refuses, duplicates
 * and reorders, a {@link SimulatedReceiver} with or without reconciliation, session version
 * changes and revocation, offline spells, a response applier that refuses now and then, and
 * crashes at every {@link FailurePoint} of the outbox (the crashed life's objects are thrown
 * away and, now and then, the file is closed and reopened). Then the network heals, a last life drains, and the invariants are checked. All
 * decisions come from one {@link Choices}; time is a {@link ManualClock}; nothing sleeps and no
 * socket is opened.
 *
 * <p>The engine's own threads (its sender pool) take part, so a schedule is reproducible as far
 * as the order of calls at one failure point and on the network is; with one sender, as here,
 * that order is fixed.
 *
 * @param <T> the store's transaction handle
 */
public final class OutboxSimulation<T> {
  /** The database a schedule runs on, supplied by the store's module. */
  public interface Database<T> {
    /** The store for a new schedule: an empty outbox in a real file. */
    OutboxStore<T> open();

    /**
     * Closes {@code store}'s file as a process that died leaves it (only its commits stay) and
     * opens the same file again.
     */
    OutboxStore<T> reopen(OutboxStore<T> store);

    /** The schedule is over: what {@link #open} returned is not used again. */
    void close(OutboxStore<T> store);

    /** Records each applied answer in the transaction it is applied in. */
    ResponseApplier<T> applier();

    /** The command of each applied answer, as committed, in the order the applies committed. */
    List<CommandId> appliedInOrder(OutboxStore<T> store);
  }

  /** What a crashed process does from the moment it dies: nothing. */
  static final class SimulatedCrash extends Error {
    private static final long serialVersionUID = 1L;
    final transient FailurePoint point;

    SimulatedCrash(FailurePoint point) {
      super("simulated crash at " + point.label(), null, false, false);
      this.point = point;
    }
  }

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final List<String> ENTITIES = List.of("entity-0", "entity-1", "entity-2");
  /** A point a life may crash at, armed at one of its first {@code latestCall} calls. */
  private record Armable(FailurePoint point, int latestCall) {}

  /**
   * Where a life may crash. A send's answer arrives fewer times per life than the other points
   * are reached: armed at a call up to 12, {@code after-response-before-ack} crashed 0 to 5
   * times in 300 schedules, and a run without one failed the coverage check; up to 3 it crashes
   * about as often as the others.
   */
  private static final List<Armable> OUTBOX_POINTS = List.of(
      new Armable(FailurePoint.BEFORE_OUTBOX_WRITE, 12),
      new Armable(FailurePoint.AFTER_OUTBOX_WRITE, 12),
      new Armable(FailurePoint.AFTER_CLAIM, 12),
      new Armable(FailurePoint.BEFORE_NETWORK_SEND, 12),
      new Armable(FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE, 12),
      new Armable(FailurePoint.AFTER_RESPONSE_BEFORE_ACK, 3));

  private final Choices choices;
  private final Database<T> database;
  private final int steps;
  private final ManualClock clock = ManualClock.startingAtEpoch2026();
  private final AtomicReference<SessionRuntime.Snapshot> session = new AtomicReference<>(
      new SessionRuntime.Snapshot("default", 0, false, "token-0"));
  private final SimulationStats stats = new SimulationStats();
  private final SimulatedReceiver receiver;
  private final SimulatedNetwork network;
  /** Accepted commands in accept order. */
  private final List<IdempotencyKey> accepted = new ArrayList<>();
  /** Every listener event, with who heard it where, in order. */
  private final List<Heard> events = Collections.synchronizedList(new ArrayList<>());

  /** One listener event, with the life, the replayer and the thread that heard it. */
  record Heard(int life, int replayer, String thread, OutboxListener.Transition transition) {
    @Override
    public String toString() {
      return "life " + life + " replayer " + replayer + " on " + thread + ": "
          + transition.from() + "->" + transition.to() + " #" + transition.fencingToken() + " "
          + transition.reason();
    }
  }
  private final boolean twoReplayers;
  /** Until the heal: the response applier throws now and then, as local state may refuse. */
  private volatile boolean refuseApplies;
  private OutboxStore<T> store;
  private Life life;
  private int lives;

  private OutboxSimulation(Choices choices, Database<T> database, int steps) {
    this.choices = choices;
    this.database = database;
    this.steps = steps;
    this.receiver = new SimulatedReceiver(choices.chance(50));
    this.network = new SimulatedNetwork(receiver, choices, stats);
    this.twoReplayers = choices.chance(50);
    this.refuseApplies = choices.chance(30);
    stats.schedules = 1;
    stats.withReconciliation = receiver.reconciles() ? 1 : 0;
    stats.withTwoReplayers = twoReplayers ? 1 : 0;
  }

  /**
   * Runs one schedule of {@code steps} steps and checks the invariants.
   *
   * @return what the schedule did
   * @throws AssertionError listing every invariant that does not hold
   */
  public static <T> SimulationStats run(Choices choices, Database<T> database, int steps) {
    OutboxSimulation<T> simulation = new OutboxSimulation<>(choices, database, steps);
    List<String> violations = simulation.runAndCheck();
    if (!violations.isEmpty()) {
      throw new AssertionError(violations.size() + " invariant(s) broken ("
          + simulation.describe() + "):\n  " + String.join("\n  ", violations));
    }
    return simulation.stats;
  }

  private String describe() {
    return (receiver.reconciles() ? "receiver with reconciliation" : "draft-only receiver")
        + ", " + (twoReplayers ? "two replayers" : "one replayer") + ", " + stats;
  }

  private List<String> runAndCheck() {
    store = database.open();
    try {
      life = new Life(true);
      for (int step = 0; step < steps; step++) {
        stats.steps++;
        step();
      }
      heal();
      return check();
    } finally {
      if (life != null) {
        life.close();
      }
      database.close(store);
    }
  }

  private void step() {
    if (life.crashers.stream().anyMatch(c -> c.dead != null)) {
      restart(); // a process died inside another's pass: both start again
    }
    int action = choices.pick(100);
    if (action < 25) {
      accept(1 + choices.pick(3));
    } else if (action < 60) {
      pass(choices.pick(life.replayers.size()));
    } else if (action < 75) {
      clock.advance(Duration.ofMillis(1 + choices.pick(
          choices.chance(80) ? 20_000 : 600_000)));
    } else if (action < 80) {
      crash(null);
    } else if (action < 85) {
      network.deliverHeld(1 + choices.pick(3));
    } else if (action < 90) {
      network.offline(!network.offline());
    } else if (action < 93) {
      changeSession();
    } else {
      pass(0);
    }
  }

  private void accept(int count) {
    String entity = ENTITIES.get(choices.pick(ENTITIES.size()));
    for (int i = 0; i < count; i++) {
      IdempotencyKey key = new IdempotencyKey("sim-" + accepted.size());
      OutboxCommand command = OutboxCommand.ofJson("note.put", entity,
          "{\"entity\":\"" + entity + "\",\"seq\":" + accepted.size() + "}")
          .withIdempotencyKey(key);
      try {
        life.outbox.accept(command);
      } catch (SimulatedCrash crash) {
        crash(crash);
        if (store.findByKey(key).isEmpty()) {
          return; // died before the row was written: never accepted
        }
      }
      accepted.add(key);
      stats.accepted++;
    }
  }

  private void pass(int replayer) {
    stats.passes++;
    life.running = replayer;
    try {
      life.replayers.get(replayer).runPass();
    } catch (SimulatedCrash crash) {
      crash(crash);
    }
  }

  /** Throws the life away: no object of it is used again; its leases run out. */
  private void crash(SimulatedCrash crash) {
    if (crash != null) {
      counted(crash);
    } else {
      stats.crashes++; // killed between steps
    }
    restart();
  }

  private void restart() {
    life.close();
    if (choices.chance(20)) {
      store = database.reopen(store);
      stats.reopens++;
    }
    clock.advance(LEASE.plusSeconds(1 + choices.pick(30)));
    life = new Life(true);
  }

  private void counted(SimulatedCrash crash) {
    stats.crashes++;
    stats.crashesAt.merge(crash.point, 1, Integer::sum);
  }

  private void changeSession() {
    stats.sessionChanges++;
    SessionRuntime.Snapshot now = session.get();
    int kind = choices.pick(10);
    if (kind < 2) {
      session.set(new SessionRuntime.Snapshot(now.tenant(), now.version() + 1, false,
          "token-" + (now.version() + 1)));
    } else if (kind < 6) {
      session.set(new SessionRuntime.Snapshot(now.tenant(), now.version(), !now.revoked(),
          now.credentials()));
    } else {
      // credentials refreshed: same session
      session.set(new SessionRuntime.Snapshot(now.tenant(), now.version(), now.revoked(),
          now.credentials() + "'"));
    }
  }

  private void heal() {
    refuseApplies = false;
    network.perfect();
    network.offline(false);
    SessionRuntime.Snapshot now = session.get();
    session.set(new SessionRuntime.Snapshot(now.tenant(), now.version(), false,
        now.credentials()));
    network.deliverHeld(Integer.MAX_VALUE);
    life.close();
    life = new Life(false);
    Map<Status, Long> before = Map.of();
    int unchanged = 0;
    for (int i = 0; i < 200 && unchanged < 5; i++) {
      if (store.nextDueAt().isEmpty()) {
        break;
      }
      clock.advance(Duration.ofMinutes(2));
      life.replayers.get(0).runPass();
      Map<Status, Long> counts = store.countByStatus();

      unchanged = counts.equals(before) ? unchanged + 1 : 0;
      before = counts;
    }
  }

  /** The database's applier, which throws now and then while {@link #refuseApplies}. */
  private ResponseApplier<T> applier() {
    ResponseApplier<T> applier = database.applier();
    return (tx, command, response) -> {
      if (refuseApplies && choices.chance(15)) {
        stats.refusedApplies++;
        throw new IllegalStateException("simulated: the local state refuses this answer");
      }
      applier.apply(tx, command, response);
    };
  }

  private List<String> check() {
    return SimulationInvariants.check(store, database.appliedInOrder(store), receiver, accepted,
        ENTITIES, List.copyOf(events), stats.crashes == 0);
  }

  /** Crashes its life at a chosen call of each failure point; afterwards every point throws. */
  private final class Crasher implements FailureInjector {
    private final Map<FailurePoint, Integer> crashAtCall = new EnumMap<>(FailurePoint.class);
    private final Map<FailurePoint, Integer> calls = new EnumMap<>(FailurePoint.class);
    volatile FailurePoint dead;

    Crasher(boolean mayCrash) {
      if (mayCrash && choices.chance(60)) {
        Armable armed = OUTBOX_POINTS.get(choices.pick(OUTBOX_POINTS.size()));
        crashAtCall.put(armed.point(), 1 + choices.pick(armed.latestCall()));
      }
    }

    /** Crashes at the next call of {@code point}. */
    synchronized void armNext(FailurePoint point) {
      crashAtCall.put(point, calls.getOrDefault(point, 0) + 1);
    }

    @Override
    public synchronized void at(FailurePoint point) {
      if (dead != null) {
        throw new SimulatedCrash(dead);
      }
      int call = calls.merge(point, 1, Integer::sum);
      if (crashAtCall.getOrDefault(point, -1) == call) {
        dead = point;
        throw new SimulatedCrash(point);
      }
    }
  }

  /**
   * The objects over the file of one or two processes, each with its own crasher: the first
   * accepts and replays, the second only replays. When either dies, both are replaced.
   */
  private final class Life implements AutoCloseable {
    final List<Crasher> crashers = new ArrayList<>();
    final Outbox<T> outbox;
    final List<Replayer<T>> replayers = new ArrayList<>();
    /** The replayer whose pass runs now (the inner one while one runs inside another's send). */
    volatile int running;

    Life(boolean mayCrash) {
      lives++;
      int count = twoReplayers ? 2 : 1;
      for (int i = 0; i < count; i++) {
        crashers.add(new Crasher(mayCrash));
      }
      network.failures(point -> crashers.get(running).at(point));
      outbox = Outbox.builder(store).clock(clock).random(new SplittableRandom(choices.nextSeed()))
          .sessionVersion(() -> session.get().version()).failureInjector(crashers.get(0))
          .build();
      for (int i = 0; i < count; i++) {
        Crasher crasher = crashers.get(i);
        int replayerNumber = i;
        int lifeNumber = lives;
        replayers.add(Replayer.builder(store, network)
            .owner("life-" + lives + "-replayer-" + i).clock(clock).session(session::get)
            .responseApplier(applier()).failureInjector(crasher)
            .concurrency(1).batchSize(4).lease(LEASE).holdInterval(Duration.ofSeconds(5))
            .retryPolicy(RetryPolicy.builder().random(new SplittableRandom(choices.nextSeed()))
                .initialInterval(Duration.ofSeconds(1)).maxInterval(Duration.ofMinutes(1))
                .maxAttempts(1_000).build())
            .listener(new OutboxListener() {
              @Override
              public void onTransition(Transition transition) {
                events.add(new Heard(lifeNumber, replayerNumber,
                    Thread.currentThread().getName(), transition));
              }
            })
            .build());
      }
      network.meanwhile(this::meanwhile);
    }

    /**
     * While one replayer's request is in flight: its lease runs out, and the other process's
     * replayer runs a pass, which may crash that process and leave the row in its hands.
     */
    private void meanwhile() {
      clock.advance(LEASE.plusSeconds(1));
      if (replayers.size() > 1) {
        int outer = running;
        running = 1 - outer;
        if (choices.chance(50)) {
          // that process dies holding the row: sending, maybe already received
          crashers.get(running).armNext(choices.chance(50) ? FailurePoint.BEFORE_NETWORK_SEND
              : FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE);
        }
        try {
          replayers.get(running).runPass();
        } catch (SimulatedCrash crash) {
          counted(crash); // that process is dead; the outer one goes on
        } finally {
          running = outer;
        }
      }
    }

    @Override
    public void close() {
      for (Replayer<T> r : replayers) {
        r.close();
      }
    }
  }
}
