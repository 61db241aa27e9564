package dev.outboxreplay.testkit.sim;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What must hold after every simulated schedule, once the network healed and a last life
 * drained: every accepted command is in the file, terminal or open with a reason (or behind an
 * open command of its entity that has one); a command took effect at the receiver at most once,
 * and an acked one exactly once with its answer applied exactly once; per entity the receiver saw
 * effects, and the local state got answers applied, in accept order; the audit holds only transitions the state table allows, with fencing
 * tokens that never go back; every listener event is in the audit and, without crashes, the
 * audit holds nothing else.
 */
final class SimulationInvariants {
  private SimulationInvariants() {}

  /** Every invariant that does not hold, one line each; empty when all hold. */
  static <T> List<String> check(OutboxStore<T> store, List<CommandId> appliedInOrder,
      SimulatedReceiver receiver, List<IdempotencyKey> accepted, List<String> entities,
      List<OutboxSimulation.Heard> events, boolean noCrash) {
    List<String> violations = new ArrayList<>();
    Map<CommandId, Integer> applied = new HashMap<>();
    for (CommandId id : appliedInOrder) {
      applied.merge(id, 1, Integer::sum);
    }
    Map<CommandId, String> entityOf = new HashMap<>();
    Map<String, Integer> positions = new HashMap<>();
    Set<CommandId> ids = new HashSet<>();
    Set<String> openEntities = new HashSet<>();
    for (int i = 0; i < accepted.size(); i++) {
      IdempotencyKey key = accepted.get(i);
      Optional<OutboxRecord> found = store.findByKey(key);
      if (found.isEmpty()) {
        violations.add("accepted command " + key.value() + " is gone");
        continue;
      }
      OutboxRecord r = found.get();
      ids.add(r.commandId());
      positions.put(r.commandId().toString(), i);
      entityOf.put(r.commandId(), r.entityKey());
      if (!r.status().isTerminal() && !openEntities.add(r.entityKey())) {
        // waits behind an earlier open command of its entity, which has the reason
      } else if (!r.status().isTerminal() && r.lastError() == null
          && lastReason(store, r.commandId()) == null) {
        violations.add(key.value() + " is " + r.status() + " with no reason after the schedule");
      }
      int effects = receiver.effects(key.value());
      int commandEffects = receiver.effectsOf(r.commandId());
      if (effects > 1 || commandEffects > 1) {
        violations.add(key.value() + " took effect " + Math.max(effects, commandEffects)
            + " times");
      }
      int appliedTimes = applied.getOrDefault(r.commandId(), 0);
      if (r.status() == Status.ACKED && (commandEffects != 1 || appliedTimes != 1)) {
        violations.add(key.value() + " is acked with " + commandEffects + " effect(s) and its "
            + "answer applied " + appliedTimes + " time(s); " + r.commandId() + " audit "
            + trail(store, r.commandId()) + " heard " + events.stream()
                .filter(h -> h.transition().commandId().equals(r.commandId()))
                .map(OutboxSimulation.Heard::toString).toList());
      } else if (appliedTimes > 1) {
        violations.add(key.value() + "'s answer applied " + appliedTimes + " times; audit "
            + trail(store, r.commandId()));
      }
      long token = 0;
      for (OutboxStore.AuditEntry a : store.auditTrail(r.commandId())) {
        if (a.from() != null && !StateMachine.isAllowed(a.from(), a.to())) {
          violations.add(key.value() + ": audit holds " + a.from() + " -> " + a.to()
              + ", which the state table does not allow");
        }
        if (a.fencingToken() < token) {
          violations.add(key.value() + ": " + a.from() + " -> " + a.to() + " written with "
              + "fencing token " + a.fencingToken() + " after token " + token + ": a replayer "
              + "that had lost the row changed it");
        }
        token = Math.max(token, a.fencingToken());
      }
    }
    for (String entity : entities) {
      int last = -1;
      for (CommandId id : receiver.effectOrder(entity)) {
        int position = positions.getOrDefault(id.toString(), -1);
        if (position < last) {
          violations.add(entity + ": effects out of accept order at the receiver: "
              + receiver.effectOrder(entity));
          break;
        }
        last = position;
      }
    }
    Map<String, Integer> lastApplied = new HashMap<>();
    for (CommandId id : appliedInOrder) {
      int position = positions.getOrDefault(id.toString(), -1);
      String entity = entityOf.get(id);
      if (entity != null && position < lastApplied.getOrDefault(entity, -1)) {
        violations.add(entity + ": answers applied out of accept order: " + appliedInOrder.stream()
            .filter(a -> entity.equals(entityOf.get(a))).toList());
      }
      if (entity != null) {
        lastApplied.merge(entity, position, Math::max);
      }
    }
    checkListener(store, events, noCrash, violations, ids);
    return violations;
  }

  private static <T> String trail(OutboxStore<T> store, CommandId id) {
    StringBuilder out = new StringBuilder();
    for (OutboxStore.AuditEntry a : store.auditTrail(id)) {
      out.append(a.from()).append("->").append(a.to()).append(" #").append(a.fencingToken())
          .append(' ').append(a.reason()).append(' ').append(a.at()).append("; ");
    }
    return out.toString();
  }

  /** The reason of the last transition after accept, or null. */
  private static <T> String lastReason(OutboxStore<T> store, CommandId id) {
    List<OutboxStore.AuditEntry> trail = store.auditTrail(id);
    OutboxStore.AuditEntry last = trail.isEmpty() ? null : trail.get(trail.size() - 1);
    return last == null || last.from() == null || last.reason() == null ? null
        : last.reason().wireName();
  }

  /** Every listener event is in the audit; without crashes, the audit holds nothing else. */
  private static <T> void checkListener(OutboxStore<T> store,
      List<OutboxSimulation.Heard> events, boolean noCrash, List<String> violations,
      Set<CommandId> ids) {
    Set<String> audited = new HashSet<>();
    for (CommandId id : ids) {
      for (OutboxStore.AuditEntry a : store.auditTrail(id)) {
        if (a.from() != null) {
          audited.add(id + " " + a.from() + "->" + a.to() + " #" + a.fencingToken());
        }
      }
    }
    Set<String> heard = new HashSet<>();
    for (OutboxSimulation.Heard h : events) {
      OutboxListener.Transition t = h.transition();
      heard.add(t.commandId() + " " + t.from() + "->" + t.to() + " #" + t.fencingToken());
    }
    Set<String> unaudited = new HashSet<>(heard);
    unaudited.removeAll(audited);
    if (!unaudited.isEmpty()) {
      violations.add("listener events not in the audit: " + unaudited);
    }
    if (noCrash) {
      Set<String> unheard = new HashSet<>(audited);
      unheard.removeAll(heard);
      if (!unheard.isEmpty()) {
        violations.add("audit entries the listener never heard: " + unheard);
      }
    }
  }
}
