package dev.outboxreplay;

/**
 * Named places in the library where a test can inject a crash or a fault through a
 * {@link FailureInjector}. Each sits on a boundary where a real process can die.
 */
public enum FailurePoint {
  BEFORE_OUTBOX_WRITE("before-outbox-write"),
  AFTER_OUTBOX_WRITE("after-outbox-write"),
  /**
   * A claim committed. The same commit may have marked some of the claimed rows sending (the
   * ones the free senders take next); their requests have not gone out.
   */
  AFTER_CLAIM("after-claim"),
  BEFORE_NETWORK_SEND("before-network-send"),
  /**
   * The whole request was written and the answer is awaited: the receiver may commit and the
   * answer never arrive. Reported by a transport that supports it ({@code OkHttpTransport}).
   */
  AFTER_NETWORK_SEND_BEFORE_RESPONSE("after-network-send-before-response"),
  AFTER_RESPONSE_BEFORE_ACK("after-response-before-ack"),
  /** Inbox: the consume transaction committed; the staged result is not projected yet. */
  AFTER_CONSUME_COMMIT_BEFORE_PROJECTION("after-consume-commit-before-projection"),
  /** Inbox: the projection succeeded; the row is not marked projected yet. */
  AFTER_PROJECTION_BEFORE_MARK("after-projection-before-mark");

  private final String label;

  FailurePoint(String label) {
    this.label = label;
  }

  /** The point's name as written in the architecture and the failure-point matrix. */
  public String label() {
    return label;
  }
}
