package dev.outboxreplay.jdbc.internal;

import java.util.Set;

/**
 * What every engine's outbox layout shares ({@code docs/table-layout.md}): the component name,
 * the columns read back into an {@code OutboxRecord}, and the ranges of the generated
 * {@code claim_due} column. Times are epoch milliseconds (UTC) in 64-bit integer columns.
 *
 * <p>The claim reads {@code idx_outbox_claim (claim_due, seq)}. {@code claim_due} is generated:
 * {@code lease_expires_at} for held rows, {@code next_attempt_at} for waiting rows flagged
 * {@code entity_head}, {@link #BLOCKED} for waiting rows whose flag is cleared (they wait behind
 * an earlier open row of their entity), {@link #ENDED} plus {@code updated_at} for terminal rows
 * and {@link #TOMBSTONED} plus {@code updated_at} for tombstones. The range scan {@code
 * claim_due <= now} therefore reads neither terminal rows nor the backlog queued behind a busy
 * entity once a claim has seen it; the history retention reads, in one range each, only the
 * ended rows or tombstones that ended before its cutoff.
 *
 * <p>{@code entity_head} is a hint kept off the accept path: every insert sets it; the first
 * claim that finds the row behind an open row of its entity clears it; it passes to the oldest
 * open row when a head becomes terminal; and rows cleared by a claim that raced with that
 * hand-over are repaired ({@code OutboxSql.repairEntityHeads}). The claim still checks the order
 * itself, so a stale {@code TRUE} costs a read, never an out-of-order send.
 */
public final class OutboxTables {
  /** Component name of the outbox tables in {@code outbox_schema_history}. */
  public static final String COMPONENT = "outbox";
  /** Component name of the inbox table in {@code outbox_schema_history}. */
  public static final String INBOX_COMPONENT = "inbox";
  /**
   * The tables the library makes, in any layout and any component (the reference receiver's
   * idempotency records included), in lower case.
   */
  public static final Set<String> LIBRARY_TABLES = Set.of(
      "outbox_schema_history", "outbox_schema_lock", "outbox_command", "outbox_audit",
      "outbox_fencing", "inbox_message", "server_idempotency");
  /** Format version written into each row's {@code schema_version}. */
  public static final int ROW_FORMAT = 1;

  /** Columns read back into an {@code OutboxRecord}, in {@link OutboxRows} order. */
  public static final String COLUMNS = "seq, command_id, idempotency_key, operation, entity_key, "
      + "payload, payload_hash, status, attempt, next_attempt_at, claim_owner, claimed_from, "
      + "fencing_token, lease_expires_at, session_version, last_error_code, last_error_message, "
      + "last_error_at, response_status, response_body, created_at, updated_at, schema_version, "
      + "first_sent_at, tombstoned_at";

  /**
   * {@code claim_due} of a waiting row that is not its entity's head: above every real time (epoch
   * milliseconds stay below 2<sup>61</sup> for millions of years), below the terminal ranges, so
   * these rows form their own index range.
   */
  public static final long BLOCKED = 1L << 61;
  /** {@code claim_due} of a terminal row that is not a tombstone: this plus {@code updated_at}. */
  public static final long ENDED = 1L << 62;
  /** {@code claim_due} of a tombstone: this plus {@code updated_at} (when the command ended). */
  public static final long TOMBSTONED = (1L << 62) + (1L << 61);

  /** The expression {@code claim_due} is generated from (see the class comment). */
  public static final String CLAIM_DUE_EXPRESSION = "CASE "
      + "WHEN status IN ('claimed', 'sending') THEN lease_expires_at "
      + "WHEN status IN ('queued', 'retryable_failed', 'unknown') THEN "
      + "CASE WHEN entity_head THEN next_attempt_at ELSE " + BLOCKED + " END "
      + "WHEN tombstoned_at IS NULL THEN " + ENDED + " + updated_at "
      + "ELSE " + TOMBSTONED + " + updated_at END";

  /** The expression {@code terminal} is generated from. */
  public static final String TERMINAL_EXPRESSION = "status IN ('acked', 'conflict', 'rejected')";

  /** The history table every component's migrations are recorded in. */
  public static final String HISTORY_DDL = "CREATE TABLE IF NOT EXISTS outbox_schema_history ("
      + "component VARCHAR(50) NOT NULL, version INT NOT NULL, "
      + "description VARCHAR(200) NOT NULL, applied_at BIGINT NOT NULL, "
      + "PRIMARY KEY (component, version))";

  private OutboxTables() {}
}
