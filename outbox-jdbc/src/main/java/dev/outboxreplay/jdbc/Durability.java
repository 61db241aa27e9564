package dev.outboxreplay.jdbc;

/**
 * What a committed write survives once the call that made it returns, on every engine.
 *
 * <p>Neither mode loses a commit that returned when the process is killed: H2's own default
 * delays writing commits by 500 ms ({@code WRITE_DELAY}), which the library sets to 0; SQLite's
 * WAL with {@code synchronous=NORMAL} has handed every commit to the operating system.
 */
public enum Durability {
  /**
   * Every commit is handed to the operating system before it returns (H2 {@code WRITE_DELAY=0},
   * SQLite WAL with {@code synchronous=NORMAL}): it survives a kill of the process, not a power
   * cut or OS crash. The default.
   */
  PROCESS_CRASH_SAFE,
  /**
   * As {@link #PROCESS_CRASH_SAFE}, and commits are also forced to the disk before they return
   * (H2: {@code CHECKPOINT SYNC} after the library's own commits; SQLite: {@code
   * synchronous=FULL}, an fsync of the WAL per commit): survives a power cut. Costs roughly one
   * disk flush per group commit.
   */
  POWER_LOSS_SAFE
}
