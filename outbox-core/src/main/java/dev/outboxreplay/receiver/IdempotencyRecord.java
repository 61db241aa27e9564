package dev.outboxreplay.receiver;

import java.security.MessageDigest;
import java.time.Instant;
import java.util.Objects;

/**
 * One key's record.
 *
 * @param state where the request is
 * @param payloadHash SHA-256 of the first request's body: a repeat with other bytes is refused
 * @param answer the stored answer when {@link RecordState#COMMITTED}, else null
 * @param error why the handler failed when {@link RecordState#FAILED} (its class only), else null
 * @param leaseExpiresAt until when the claim of a {@link RecordState#STARTED} record lasts; null
 *     for other states
 */
public record IdempotencyRecord(RecordState state, byte[] payloadHash, StoredAnswer answer,
    String error, Instant leaseExpiresAt) {
  public IdempotencyRecord {
    Objects.requireNonNull(state, "state == null");
    Objects.requireNonNull(payloadHash, "payloadHash == null");
  }

  /**
   * True for a started record whose claim's lease ended by {@code now}: the node processing it
   * stopped (or stalled) before it committed, nothing of it took effect unless that node still
   * commits before anyone takes the key over, and a repeat of the request takes it over. A
   * reconciliation answers it as failed, so that the client resends with the same key.
   */
  public boolean abandonedAt(Instant now) {
    return state == RecordState.STARTED && leaseExpiresAt != null
        && !leaseExpiresAt.isAfter(now);
  }

  /** True when {@code hash} is the hash of the payload this record was made for. */
  public boolean samePayload(byte[] hash) {
    return MessageDigest.isEqual(payloadHash, hash);
  }
}
