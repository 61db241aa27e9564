package dev.outboxreplay.receiver;

import java.util.Objects;

/** What {@link IdempotencyRecordStore#claim} found: the key is this node's now, or a record stands. */
public sealed interface Claim {
  /**
   * This node owns the key: run the handler and {@link IdempotencyRecordStore#complete} or
   * {@link IdempotencyRecordStore#fail} with this claim.
   *
   * @param tenant the tenant
   * @param key the idempotency key
   * @param fence the claim's fencing token: larger for each new owner of the key; a completion
   *     with an older one changes nothing
   */
  record Owned(String tenant, String key, long fence) implements Claim {
    public Owned {
      Objects.requireNonNull(tenant, "tenant == null");
      Objects.requireNonNull(key, "key == null");
    }
  }

  /**
   * A record stands in the way: committed (replay its answer if the payload is the same), started
   * by a node whose lease has not expired (409 in progress), or failed with another payload.
   *
   * @param record the record as read
   */
  record Standing(IdempotencyRecord record) implements Claim {
    public Standing {
      Objects.requireNonNull(record, "record == null");
    }
  }
}
