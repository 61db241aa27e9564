package dev.outboxreplay.testkit.sim;

import dev.outboxreplay.FailurePoint;
import java.util.EnumMap;
import java.util.Map;

/** What one simulated schedule did, for the report and for coverage checks. */
public final class SimulationStats {
  int schedules;
  int withReconciliation;
  int withTwoReplayers;
  int steps;
  int accepted;
  int passes;
  int crashes;
  int reopens;
  int lostRequests;
  int held;
  int reordered;
  int refused;
  int duplicated;
  int lostAnswers;
  int interleaved;
  int reconciled;
  int notSent;
  int sessionChanges;
  int refusedApplies;
  final Map<FailurePoint, Integer> crashesAt = new EnumMap<>(FailurePoint.class);

  public int accepted() {
    return accepted;
  }

  public int crashes() {
    return crashes;
  }

  public int interleaved() {
    return interleaved;
  }

  public int schedules() {
    return schedules;
  }

  public int withReconciliation() {
    return withReconciliation;
  }

  public int withTwoReplayers() {
    return withTwoReplayers;
  }

  public int reordered() {
    return reordered;
  }

  public int duplicated() {
    return duplicated;
  }

  public int lostAnswers() {
    return lostAnswers;
  }

  public int reopens() {
    return reopens;
  }

  /** Acks whose response applier threw (the local state refused them for a while). */
  public int refusedApplies() {
    return refusedApplies;
  }

  public Map<FailurePoint, Integer> crashesAt() {
    return Map.copyOf(crashesAt);
  }

  /** Adds {@code other}'s counts to these. */
  public void add(SimulationStats other) {
    schedules += other.schedules;
    withReconciliation += other.withReconciliation;
    withTwoReplayers += other.withTwoReplayers;
    steps += other.steps;
    accepted += other.accepted;
    passes += other.passes;
    crashes += other.crashes;
    reopens += other.reopens;
    lostRequests += other.lostRequests;
    held += other.held;
    reordered += other.reordered;
    refused += other.refused;
    duplicated += other.duplicated;
    lostAnswers += other.lostAnswers;
    interleaved += other.interleaved;
    reconciled += other.reconciled;
    notSent += other.notSent;
    sessionChanges += other.sessionChanges;
    refusedApplies += other.refusedApplies;
    other.crashesAt.forEach((p, n) -> crashesAt.merge(p, n, Integer::sum));
  }

  @Override
  public String toString() {
    return "schedules=" + schedules + " (reconciling receiver " + withReconciliation
        + ", two replayers " + withTwoReplayers + ") steps=" + steps + " accepted=" + accepted
        + " passes=" + passes + " crashes=" + crashes + " " + crashesAt + " reopens=" + reopens + " lostRequests=" + lostRequests
        + " held=" + held + " reordered=" + reordered + " refused=" + refused + " duplicated="
        + duplicated + " lostAnswers=" + lostAnswers + " interleaved=" + interleaved
        + " reconciled=" + reconciled + " notSent=" + notSent + " sessionChanges="
        + sessionChanges + " refusedApplies=" + refusedApplies;
  }
}
