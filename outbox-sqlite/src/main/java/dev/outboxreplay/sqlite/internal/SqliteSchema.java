package dev.outboxreplay.sqlite.internal;

import dev.outboxreplay.jdbc.Migration;
import dev.outboxreplay.jdbc.internal.OutboxTables;
import java.util.List;

/**
 * SQLite's outbox and inbox layouts and their migrations ({@code docs/table-layout.md}): the same
 * columns, generated columns and indexes as H2's latest layout, in SQLite's types (TEXT ids, BLOB
 * bytes, INTEGER times and flags). The accept order {@code seq} is the row id, so it never goes
 * back after a deletion. Fencing tokens come from the one row of {@code outbox_fencing}, moved on
 * inside each claim's transaction: SQLite has no sequences.
 */
public final class SqliteSchema {
  public static final List<Migration> OUTBOX = List.of(
      new Migration(1, "outbox_command, outbox_audit and outbox_fencing, with the claim, "
          + "entity and status indexes", List.of(
              "CREATE TABLE IF NOT EXISTS outbox_command ("
                  + "seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                  + "command_id TEXT NOT NULL UNIQUE, "
                  + "idempotency_key TEXT NOT NULL UNIQUE, "
                  + "operation TEXT NOT NULL, "
                  + "entity_key TEXT NOT NULL, "
                  + "payload BLOB NOT NULL, "
                  + "payload_hash BLOB NOT NULL, "
                  + "status TEXT NOT NULL, "
                  + "attempt INTEGER NOT NULL, "
                  + "next_attempt_at INTEGER NOT NULL, "
                  + "claim_owner TEXT, "
                  + "claimed_from TEXT, "
                  + "fencing_token INTEGER NOT NULL, "
                  + "lease_expires_at INTEGER, "
                  + "session_version INTEGER NOT NULL, "
                  + "last_error_code TEXT, "
                  + "last_error_message TEXT, "
                  + "last_error_at INTEGER, "
                  + "response_status INTEGER, "
                  + "response_body BLOB, "
                  + "created_at INTEGER NOT NULL, "
                  + "updated_at INTEGER NOT NULL, "
                  + "schema_version INTEGER NOT NULL, "
                  + "entity_head INTEGER NOT NULL DEFAULT 1, "
                  + "first_sent_at INTEGER, "
                  + "tombstoned_at INTEGER, "
                  + "terminal INTEGER GENERATED ALWAYS AS (" + OutboxTables.TERMINAL_EXPRESSION
                  + ") VIRTUAL, "
                  + "claim_due INTEGER GENERATED ALWAYS AS (" + OutboxTables.CLAIM_DUE_EXPRESSION
                  + ") VIRTUAL)",
              "CREATE INDEX IF NOT EXISTS idx_outbox_claim ON outbox_command (claim_due, seq)",
              "CREATE INDEX IF NOT EXISTS idx_outbox_entity_open "
                  + "ON outbox_command (entity_key, terminal, seq)",
              "CREATE INDEX IF NOT EXISTS idx_outbox_status "
                  + "ON outbox_command (status, lease_expires_at)",
              "CREATE TABLE IF NOT EXISTS outbox_audit ("
                  + "id INTEGER PRIMARY KEY AUTOINCREMENT, "
                  + "command_id TEXT NOT NULL, idempotency_key TEXT NOT NULL, "
                  + "from_status TEXT, to_status TEXT NOT NULL, "
                  + "fencing_token INTEGER NOT NULL, reason TEXT NOT NULL, at INTEGER NOT NULL)",
              "CREATE INDEX IF NOT EXISTS idx_outbox_audit_command "
                  + "ON outbox_audit (command_id, id)",
              "CREATE TABLE IF NOT EXISTS outbox_fencing ("
                  + "id INTEGER PRIMARY KEY, value INTEGER NOT NULL)",
              "INSERT OR IGNORE INTO outbox_fencing (id, value) VALUES (1, 0)")));

  public static final List<Migration> INBOX = List.of(
      new Migration(1, "inbox_message table with state index and redelivery counts", List.of(
          "CREATE TABLE IF NOT EXISTS inbox_message ("
              + "scope TEXT NOT NULL, "
              + "message_id TEXT NOT NULL, "
              + "state TEXT NOT NULL, "
              + "staged_result BLOB, "
              + "message_hash BLOB NOT NULL, "
              + "consumed_at INTEGER NOT NULL, "
              + "projected_at INTEGER, "
              + "updated_at INTEGER NOT NULL, "
              + "mismatches INTEGER DEFAULT 0 NOT NULL, "
              + "last_mismatch_at INTEGER, "
              + "PRIMARY KEY (scope, message_id))",
          "CREATE INDEX IF NOT EXISTS idx_inbox_state ON inbox_message (state, consumed_at)")));

  private SqliteSchema() {}
}
