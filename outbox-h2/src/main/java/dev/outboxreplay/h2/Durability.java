package dev.outboxreplay.h2;

/**
 * What a committed write survives once the call that made it returns.
 *
 * <p>H2's own default delays writing commits by 500 ms ({@code WRITE_DELAY}), so a kill -9 can
 * lose commits that already returned. Neither mode here does.
 */
public enum Durability {
  /**
   * Every commit is handed to the operating system before it returns ({@code WRITE_DELAY=0}): it
   * survives a kill of the process, not a power cut or OS crash. The default.
   */
  PROCESS_CRASH_SAFE,
  /**
   * As {@link #PROCESS_CRASH_SAFE}, and the library's own commits are also forced to the disk
   * ({@code CHECKPOINT SYNC}) before they return: survives a power cut. Costs roughly one disk
   * flush per group commit.
   */
  POWER_LOSS_SAFE
}
