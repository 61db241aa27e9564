package dev.outboxreplay;

/**
 * A write carried a fencing token or expected status that is no longer current: another replayer
 * took the row over (or it moved on). Nothing was changed. The holder of the stale token must drop
 * its work on this row.
 */
public final class FencedOffException extends OutboxException {
  private static final long serialVersionUID = 1L;
  private final transient CommandId commandId;
  private final long presentedToken;
  private final long currentToken;

  public FencedOffException(CommandId commandId, Status expected, long presentedToken,
      Status current, long currentToken) {
    super("command " + commandId + " fenced off: write expected status "
        + expected.wireName() + " with token " + presentedToken + ", row is "
        + (current == null ? "missing" : current.wireName() + " with token " + currentToken));
    this.commandId = commandId;
    this.presentedToken = presentedToken;
    this.currentToken = currentToken;
  }

  /** The command whose write was refused. */
  public CommandId commandId() {
    return commandId;
  }

  /** The token the refused write carried. */
  public long presentedToken() {
    return presentedToken;
  }

  /** The row's token when the write was refused (0 when the row is missing). */
  public long currentToken() {
    return currentToken;
  }
}
