package dev.outboxreplay.h2.internal;

import dev.outboxreplay.h2.Migration;
import java.util.List;

/**
 * The outbox table layout, documented in {@code docs/table-layout.md}. Times are epoch
 * milliseconds (UTC) in BIGINT columns.
 *
 * <p>The claim reads {@code idx_outbox_claim (claim_due, seq)}. {@code claim_due} is generated:
 * {@code lease_expires_at} for held rows, {@code next_attempt_at} for waiting rows flagged
 * {@code entity_head}, {@link #BLOCKED} for waiting rows whose flag is cleared (they wait behind
 * an earlier open row of their entity), {@link #ENDED} plus {@code updated_at} for terminal rows
 * and {@link #TOMBSTONED} plus {@code updated_at} for tombstones. The range scan {@code
 * claim_due <= now} therefore reads neither terminal rows nor the backlog queued behind a busy
 * entity once a claim has seen it, however long it is; and the history retention reads, in one
 * range each, only the ended rows or tombstones that ended before its cutoff. {@code
 * entity_head} is a hint kept off the accept path: every insert sets it; the first claim that
 * finds the row behind an open row of its entity clears it; it passes to the oldest open row
 * when a head becomes terminal; and rows cleared by a claim that raced with that hand-over are
 * repaired (see {@link OutboxSql#repairEntityHeads}). The claim still checks the order itself,
 * so a stale {@code TRUE} costs a read, never an out-of-order send.
 */
public final class OutboxSchema {
  /** Component name in {@code outbox_schema_history}. */
  public static final String COMPONENT = "outbox";
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

  /** The generated {@code claim_due} from migration 8 on (see the class comment). */
  private static final String CLAIM_DUE = "claim_due BIGINT GENERATED ALWAYS AS (CASE "
      + "WHEN status IN ('claimed', 'sending') THEN lease_expires_at "
      + "WHEN status IN ('queued', 'retryable_failed', 'unknown') THEN "
      + "CASE WHEN entity_head THEN next_attempt_at ELSE " + BLOCKED + " END "
      + "WHEN tombstoned_at IS NULL THEN " + ENDED + " + updated_at "
      + "ELSE " + TOMBSTONED + " + updated_at END)";

  /**
   * Values each sequence (accept order {@code seq}, audit {@code id}, fencing tokens) hands out per
   * durable write of its high-water mark. H2 writes that mark in a commit of its own before handing
   * out the first value past it, so values stay increasing across a process kill; the values
   * reserved but unused before a kill are skipped. With H2's default of 32, those extra commits
   * were a fifth of the replayer's own time.
   */
  public static final int SEQUENCE_CACHE = 1024;

  /** Marks every open row with no earlier open row of its entity as the head (idempotent). */
  private static final String REPAIR_ENTITY_HEADS_ALL = "UPDATE outbox_command c "
      + "SET entity_head = TRUE WHERE c.entity_head = FALSE AND c.terminal = FALSE "
      + "AND NOT EXISTS (SELECT 1 FROM outbox_command p WHERE p.entity_key = c.entity_key "
      + "AND p.terminal = FALSE AND p.seq < c.seq)";

  /** Rewrites the reasons older releases audited into {@code dev.outboxreplay.Reason} names. */
  private static final String LEGACY_AUDIT_REASONS = "UPDATE outbox_audit SET reason = CASE "
      + "WHEN reason IN ('http_401', 'http_403') THEN 'credentials_refused' "
      + "WHEN reason = 'connect_failed' THEN 'not_sent_offline' "
      + "WHEN reason IN ('no_response', 'timeout_after_send') THEN 'outcome_unknown' "
      + "WHEN reason = 'reconciliation_unreachable' THEN 'released' "
      + "WHEN reason LIKE 'http_%' AND to_status = 'acked' THEN 'acked' "
      + "WHEN reason LIKE 'http_%' AND to_status = 'conflict' THEN 'conflict' "
      + "WHEN reason LIKE 'http_%' AND to_status = 'rejected' THEN 'rejected_by_receiver' "
      + "WHEN reason = 'http_409' THEN 'in_progress' "
      + "WHEN reason LIKE 'http_%' THEN 'retryable_response' "
      + "WHEN reason IN ('acked', 'claimed', 'sending', 'released', 'reconciled_committed', "
      + "'reconciled_processing', 'not_sent_replay_paused', 'not_sent_lease_half_spent', "
      + "'not_sent_pass_stopped', 'replay_paused', 'stale_response', 'apply_failed', "
      + "'held_stale_session', 'stale_session', 'poison_max_attempts', 'poison_max_age', "
      + "'lease_expired_while_sending', 'operator_requeue') THEN reason "
      + "WHEN to_status = 'acked' THEN 'acked' "
      + "ELSE 'legacy' END";

  public static final List<Migration> MIGRATIONS = List.of(
      new Migration(1, "outbox_command table, due and per-entity indexes, fencing sequence",
          List.of(
              "CREATE TABLE IF NOT EXISTS outbox_command ("
                  + "seq BIGINT GENERATED BY DEFAULT AS IDENTITY NOT NULL, "
                  + "command_id UUID NOT NULL PRIMARY KEY, "
                  + "idempotency_key VARCHAR(255) NOT NULL, "
                  + "operation VARCHAR(200) NOT NULL, "
                  + "entity_key VARCHAR(500) NOT NULL, "
                  + "payload VARBINARY NOT NULL, "
                  + "payload_hash BINARY(32) NOT NULL, "
                  + "status VARCHAR(20) NOT NULL, "
                  + "attempt INT NOT NULL, "
                  + "next_attempt_at BIGINT NOT NULL, "
                  + "claim_owner VARCHAR(200), "
                  + "claimed_from VARCHAR(20), "
                  + "fencing_token BIGINT NOT NULL, "
                  + "lease_expires_at BIGINT, "
                  + "session_version BIGINT NOT NULL, "
                  + "last_error_code VARCHAR(100), "
                  + "last_error_message VARCHAR(1000), "
                  + "last_error_at BIGINT, "
                  + "response_status INT, "
                  + "response_body VARBINARY, "
                  + "created_at BIGINT NOT NULL, "
                  + "updated_at BIGINT NOT NULL, "
                  + "schema_version INT NOT NULL, "
                  + "terminal BOOLEAN GENERATED ALWAYS AS "
                  + "(status IN ('acked', 'conflict', 'rejected')), "
                  + "due_at BIGINT GENERATED ALWAYS AS (CASE "
                  + "WHEN status IN ('queued', 'retryable_failed', 'unknown') THEN next_attempt_at "
                  + "WHEN status IN ('claimed', 'sending') THEN lease_expires_at "
                  + "ELSE 9223372036854775807 END), "
                  + "CONSTRAINT uq_outbox_idempotency_key UNIQUE (idempotency_key))",
              "CREATE INDEX IF NOT EXISTS idx_outbox_due ON outbox_command (due_at, seq)",
              "CREATE INDEX IF NOT EXISTS idx_outbox_entity_open "
                  + "ON outbox_command (entity_key, terminal, seq)",
              "CREATE SEQUENCE IF NOT EXISTS outbox_fencing_token START WITH 1")),
      new Migration(2, "outbox_audit trail of status changes after accept", List.of(
          "CREATE TABLE IF NOT EXISTS outbox_audit ("
              + "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
              + "command_id UUID NOT NULL, idempotency_key VARCHAR(255) NOT NULL, "
              + "from_status VARCHAR(20), to_status VARCHAR(20) NOT NULL, "
              + "fencing_token BIGINT NOT NULL, reason VARCHAR(100) NOT NULL, at BIGINT NOT NULL)",
          "CREATE INDEX IF NOT EXISTS idx_outbox_audit_command ON outbox_audit (command_id, id)",
          "CREATE INDEX IF NOT EXISTS idx_outbox_audit_at ON outbox_audit (at)")),
      new Migration(3, "entity_head flag and claim_due index: the claim reads entity heads only",
          List.of(
              "ALTER TABLE outbox_command ADD COLUMN IF NOT EXISTS "
                  + "entity_head BOOLEAN DEFAULT FALSE NOT NULL",
              REPAIR_ENTITY_HEADS_ALL,
              "ALTER TABLE outbox_command ADD COLUMN IF NOT EXISTS claim_due BIGINT "
                  + "GENERATED ALWAYS AS (CASE "
                  + "WHEN status IN ('claimed', 'sending') THEN lease_expires_at "
                  + "WHEN status IN ('queued', 'retryable_failed', 'unknown') THEN "
                  + "CASE WHEN entity_head THEN next_attempt_at ELSE " + (Long.MAX_VALUE - 1)
                  + " END ELSE " + Long.MAX_VALUE + " END)",
              "CREATE INDEX IF NOT EXISTS idx_outbox_claim ON outbox_command (claim_due, seq)",
              "DROP INDEX IF EXISTS idx_outbox_due",
              "ALTER TABLE outbox_command DROP COLUMN IF EXISTS due_at")),
      new Migration(4, "replay hot path: sequences reserve " + SEQUENCE_CACHE + " values per "
          + "durable write; the audit is pruned in write order without idx_outbox_audit_at",
          List.of(
              "ALTER TABLE outbox_command ALTER COLUMN seq SET CACHE " + SEQUENCE_CACHE,
              "ALTER TABLE outbox_audit ALTER COLUMN id SET CACHE " + SEQUENCE_CACHE,
              "ALTER SEQUENCE outbox_fencing_token CACHE " + SEQUENCE_CACHE,
              // every audit insert paid for this index; OutboxSql.pruneAudit reads id order
              "DROP INDEX IF EXISTS idx_outbox_audit_at")),
      new Migration(5, "first_sent_at (max age counts from the first attempt that may have "
          + "reached the receiver); one reason vocabulary in the audit", List.of(
              "ALTER TABLE outbox_command ADD COLUMN IF NOT EXISTS first_sent_at BIGINT",
              // rows attempted before this column existed: count from accept, as they did
              "UPDATE outbox_command SET first_sent_at = created_at "
                  + "WHERE attempt > 0 AND first_sent_at IS NULL",
              LEGACY_AUDIT_REASONS)),
      new Migration(6, "idx_outbox_status: lease recovery reads expired leases only, status "
          + "counts read no acked row", List.of(
              // (status, lease end): 'sending' and 'claimed' rows by lease end; one range per
              // status for the counts (OutboxSql.countByStatus)
              "CREATE INDEX IF NOT EXISTS idx_outbox_status "
                  + "ON outbox_command (status, lease_expires_at)")),
      new Migration(7, "tombstoned_at: ended commands keep their identity, hash and outcome, "
          + "not their payload", List.of(
              "ALTER TABLE outbox_command ADD COLUMN IF NOT EXISTS tombstoned_at BIGINT")),
      new Migration(8, "claim_due orders terminal rows and tombstones by end time: the history "
          + "retention reads only the rows it changes, not the whole history", List.of(
              // each step can run again after a kill between them (the column is made anew)
              "DROP INDEX IF EXISTS idx_outbox_claim",
              "ALTER TABLE outbox_command DROP COLUMN IF EXISTS claim_due",
              "ALTER TABLE outbox_command ADD COLUMN IF NOT EXISTS " + CLAIM_DUE,
              "CREATE INDEX IF NOT EXISTS idx_outbox_claim ON outbox_command (claim_due, seq)")));

  private OutboxSchema() {}
}
