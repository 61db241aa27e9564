package dev.outboxreplay.receiver;

/** Where a key's request is. */
public enum RecordState {
  /** Being processed by a node whose lease on the key has not expired; repeats get 409. */
  STARTED("started"),
  /** Applied; its stored answer is the answer to every repeat with the same payload. */
  COMMITTED("committed"),
  /** The handler failed and nothing took effect; a repeat with the same payload runs again. */
  FAILED("failed");

  private final String stored;

  RecordState(String stored) {
    this.stored = stored;
  }

  /** The value stored in the table and named in reconciliation answers. */
  public String stored() {
    return stored;
  }

  /**
   * The state stored as {@code value}.
   *
   * @throws IllegalStateException for a value no release writes
   */
  public static RecordState of(String value) {
    for (RecordState s : values()) {
      if (s.stored.equals(value)) {
        return s;
      }
    }
    throw new IllegalStateException("unknown idempotency record state '" + value + "'");
  }
}
