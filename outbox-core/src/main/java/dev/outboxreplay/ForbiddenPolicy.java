package dev.outboxreplay;

/** What a 403 ({@link TransportResult.Kind#FORBIDDEN}) means to the replayer. */
public enum ForbiddenPolicy {
  /**
   * The default: this command is forbidden (for example a permission revoked while the user was
   * offline). It ends rejected with {@link Reason#FORBIDDEN}, the listener is told, and other
   * commands go on.
   */
  REJECT_COMMAND,
  /**
   * For receivers that answer 403 for refused credentials: like a 401, replay pauses until the
   * session's credentials change, and the command is not counted as an attempt.
   */
  PAUSE_SESSION
}
