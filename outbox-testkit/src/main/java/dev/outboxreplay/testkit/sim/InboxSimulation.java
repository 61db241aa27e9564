package dev.outboxreplay.testkit.sim;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxConsumer;
import dev.outboxreplay.InboxStore;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.testkit.ManualClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One simulated schedule of the real inbox: messages delivered at least once, duplicated, now
 * and then with other bytes under a known id; a projector that fails now and then; crashes after
 * the consume commit and after the projection (the crashed process's objects are thrown away and,
 * now and then, the file closed and opened again, then the new process recovers what is
 * pending). Afterwards: every message delivered with its own bytes was consumed exactly once (its
 * consumer's effect committed once, with the first bytes), and the projection holds exactly the
 * consumed messages, each with its staged result.
 *
 * @param <T> the store's transaction handle
 */
public final class InboxSimulation<T> {
  /** The database a schedule runs on, supplied by the store's module. */
  public interface Database<T> {
    /** The store for a new schedule: an empty inbox in a real file. */
    InboxStore<T> open();

    /** Closes {@code store}'s file as a dead process leaves it and opens it again. */
    InboxStore<T> reopen(InboxStore<T> store);

    /**
     * A consumer that advances the application's irreversible state in the consume transaction
     * (records the message's id and bytes) and stages {@code "projected:" + bytes}.
     */
    InboxConsumer<T> consumer();

    /** Per message id, how many consumer effects committed, with the bytes of the first. */
    Map<String, List<byte[]>> consumed(InboxStore<T> store);
  }

  private static final String SCOPE = "chat";

  private final Choices choices;
  private final Database<T> database;
  private final ManualClock clock = ManualClock.startingAtEpoch2026();
  private final Map<String, byte[]> sent = new HashMap<>();
  /** The application's projection: message id to the staged results it was given. */
  private final Map<String, List<byte[]>> projected = new HashMap<>();
  private final SimulationStats stats;
  private InboxStore<T> store;
  private Inbox<T> inbox;
  private volatile FailurePoint crashAt;
  private int crashCall;

  private InboxSimulation(Choices choices, Database<T> database, SimulationStats stats) {
    this.choices = choices;
    this.database = database;
    this.stats = stats;
  }

  /**
   * Runs one schedule of {@code deliveries} deliveries and checks the invariants.
   *
   * @throws AssertionError listing every invariant that does not hold
   */
  public static <T> SimulationStats run(Choices choices, Database<T> database, int deliveries) {
    SimulationStats stats = new SimulationStats();
    stats.schedules = 1;
    InboxSimulation<T> simulation = new InboxSimulation<>(choices, database, stats);
    List<String> violations = simulation.runAndCheck(deliveries);
    if (!violations.isEmpty()) {
      throw new AssertionError(violations.size() + " inbox invariant(s) broken (" + stats
          + "):\n  " + String.join("\n  ", violations));
    }
    return stats;
  }

  private List<String> runAndCheck(int deliveries) {
    store = database.open();
    start();
    int messages = 3 + choices.pick(10);
    for (int i = 0; i < deliveries; i++) {
      stats.steps++;
      String id = "m-" + choices.pick(messages);
      byte[] bytes = ("message " + id).getBytes(StandardCharsets.UTF_8);
      if (sent.containsKey(id) && choices.chance(5)) {
        bytes = ("tampered " + id).getBytes(StandardCharsets.UTF_8); // same id, other bytes
      } else {
        sent.put(id, bytes);
      }
      try {
        ReceiveResult result = inbox.receive(SCOPE, id, bytes);
        if (result.outcome() != ReceiveResult.Outcome.CONSUMED) {
          stats.duplicated++;
        }
      } catch (InboxSimulation.Crash crash) {
        crashed(crash);
      } catch (ProjectionFailed failed) {
        stats.refused++; // the row stays staged; recovery projects it
      }
    }
    crashAt = null;
    failProjections = false;
    inbox.recoverPending();
    return check();
  }

  private volatile boolean failProjections = true;

  private void crashed(Crash crash) {
    stats.crashes++;
    stats.crashesAt.merge(crash.point, 1, Integer::sum);
    if (choices.chance(30)) {
      store = database.reopen(store);
      stats.reopens++;
    }
    start();
  }

  /**
   * A new process: a new inbox over the file, which recovers what is pending as it starts (and
   * may crash doing so).
   */
  private void start() {
    try {
      startOnce();
    } catch (Crash crash) {
      crashed(crash);
    }
  }

  private void startOnce() {
    crashAt = null;
    FailurePoint[] points = {FailurePoint.AFTER_CONSUME_COMMIT_BEFORE_PROJECTION,
        FailurePoint.AFTER_PROJECTION_BEFORE_MARK};
    FailureInjector crasher = point -> { };
    if (choices.chance(70)) {
      crashAt = points[choices.pick(points.length)];
      crashCall = 1 + choices.pick(4);
      int[] calls = {0};
      crasher = point -> {
        if (point == crashAt && ++calls[0] == crashCall) {
          throw new Crash(point);
        }
      };
    }
    inbox = Inbox.builder(store, database.consumer(), (scope, id, staged) -> {
      if (failProjections && choices.chance(5)) {
        throw new ProjectionFailed();
      }
      projected.computeIfAbsent(id, k -> new ArrayList<>()).add(staged);
    }).clock(clock).failureInjector(crasher).build();
  }

  private List<String> check() {
    List<String> violations = new ArrayList<>();
    Map<String, List<byte[]>> consumed = database.consumed(store);
    for (Map.Entry<String, byte[]> m : sent.entrySet()) {
      List<byte[]> effects = consumed.getOrDefault(m.getKey(), List.of());
      if (effects.size() != 1) {
        violations.add(m.getKey() + " consumed " + effects.size() + " times");
        continue;
      }
      if (!Arrays.equals(effects.get(0), m.getValue())) {
        violations.add(m.getKey() + " consumed with other bytes than the message's own");
      }
      List<byte[]> results = projected.getOrDefault(m.getKey(), List.of());
      byte[] expected = ("projected:" + new String(m.getValue(), StandardCharsets.UTF_8))
          .getBytes(StandardCharsets.UTF_8);
      if (results.isEmpty()) {
        violations.add(m.getKey() + " consumed but never projected");
      } else if (results.stream().anyMatch(r -> !Arrays.equals(r, expected))) {
        violations.add(m.getKey() + " projected with another staged result");
      }
    }
    for (String id : projected.keySet()) {
      if (!sent.containsKey(id)) {
        violations.add(id + " projected but never sent");
      }
    }
    for (String id : consumed.keySet()) {
      if (!sent.containsKey(id)) {
        violations.add(id + " consumed but never sent");
      }
    }
    return violations;
  }

  /** A crash at a failure point: the process's objects are not used again. */
  static final class Crash extends Error {
    private static final long serialVersionUID = 1L;
    final transient FailurePoint point;

    Crash(FailurePoint point) {
      super("simulated crash at " + point.label(), null, false, false);
      this.point = point;
    }
  }

  /** The application's projection failed this time. */
  static final class ProjectionFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ProjectionFailed() {
      super("simulated projection failure", null, false, false);
    }
  }
}
