package dev.outboxreplay.testkit.sim;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.TransportResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An in-memory receiver with the IETF Idempotency-Key draft's semantics: the first request with
 * a key takes effect and its answer is stored; a repeat with the same bytes gets the stored
 * answer and no effect; the same key with other bytes gets 422. With {@code reconciliation} it
 * also answers what became of a key; without, it is a plain draft receiver. Thread-safe.
 */
public final class SimulatedReceiver {
  private final boolean reconciliation;
  private final Map<String, byte[]> payloads = new HashMap<>();
  private final Map<String, StoredResponse> answers = new HashMap<>();
  private final Map<String, Integer> effects = new HashMap<>();
  private final Map<CommandId, Integer> effectsByCommand = new HashMap<>();
  private final Map<String, List<CommandId>> effectOrder = new HashMap<>();

  public SimulatedReceiver(boolean reconciliation) {
    this.reconciliation = reconciliation;
  }

  /** Whether it has the reconciliation endpoint. */
  public boolean reconciles() {
    return reconciliation;
  }

  /** Processes one request that reached it. */
  public synchronized TransportResult deliver(OutboxRecord command) {
    String key = command.idempotencyKey().value();
    byte[] bytes = command.payload().bytes();
    byte[] first = payloads.get(key);
    if (first != null) {
      if (!Arrays.equals(first, bytes)) {
        return TransportResult.of(TransportResult.Kind.CONFLICT,
            new StoredResponse(422, new byte[0]), "422", "key reused with another payload");
      }
      return TransportResult.of(TransportResult.Kind.ACKED, answers.get(key), "200",
          "replayed");
    }
    payloads.put(key, bytes);
    int effect = effects.merge(key, 1, Integer::sum);
    effectsByCommand.merge(command.commandId(), 1, Integer::sum);
    effectOrder.computeIfAbsent(command.entityKey(), e -> new ArrayList<>())
        .add(command.commandId());
    StoredResponse answer = new StoredResponse(201,
        ("{\"effect\":" + effect + "}").getBytes(StandardCharsets.UTF_8));
    answers.put(key, answer);
    return TransportResult.of(TransportResult.Kind.ACKED, answer, "201", "created");
  }

  /** The reconciliation answer for {@code key}; empty without the endpoint. */
  public synchronized Optional<Reconciliation> reconcile(String key) {
    if (!reconciliation) {
      return Optional.empty();
    }
    StoredResponse answer = answers.get(key);
    return Optional.of(answer == null ? Reconciliation.notSeen()
        : Reconciliation.committed(answer));
  }

  /** How many times the request with {@code key} took effect. */
  public synchronized int effects(String key) {
    return effects.getOrDefault(key, 0);
  }

  /**
   * How many times the command took effect, under whatever keys it came: the business effect a
   * receiver keyed by the client's key cannot dedupe when the client changes the key.
   */
  public synchronized int effectsOf(CommandId command) {
    return effectsByCommand.getOrDefault(command, 0);
  }

  /** Every key's effect count. */
  public synchronized Map<String, Integer> allEffects() {
    return Map.copyOf(effects);
  }

  /** The commands of {@code entity} in the order they took effect. */
  public synchronized List<CommandId> effectOrder(String entity) {
    return List.copyOf(effectOrder.getOrDefault(entity, List.of()));
  }
}
