package dev.outboxreplay.receiver;

import java.security.MessageDigest;
import java.util.Objects;

/**
 * One key's record.
 *
 * @param state where the request is
 * @param payloadHash SHA-256 of the first request's body: a repeat with other bytes is refused
 * @param answer the stored answer when {@link RecordState#COMMITTED}, else null
 * @param error why the handler failed when {@link RecordState#FAILED} (its class only), else null
 */
public record IdempotencyRecord(RecordState state, byte[] payloadHash, StoredAnswer answer,
    String error) {
  public IdempotencyRecord {
    Objects.requireNonNull(state, "state == null");
    Objects.requireNonNull(payloadHash, "payloadHash == null");
  }

  /** True when {@code hash} is the hash of the payload this record was made for. */
  public boolean samePayload(byte[] hash) {
    return MessageDigest.isEqual(payloadHash, hash);
  }
}
