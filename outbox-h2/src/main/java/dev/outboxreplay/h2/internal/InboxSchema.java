package dev.outboxreplay.h2.internal;

import dev.outboxreplay.jdbc.Migration;
import java.util.List;

/** H2's processed-inbox table layout, documented in {@code docs/table-layout.md}. */
public final class InboxSchema {
  public static final List<Migration> MIGRATIONS = List.of(
      new Migration(1, "inbox_message table with state index", List.of(
          "CREATE TABLE IF NOT EXISTS inbox_message ("
              + "scope VARCHAR(200) NOT NULL, "
              + "message_id VARCHAR(200) NOT NULL, "
              + "state VARCHAR(20) NOT NULL, "
              + "staged_result VARBINARY, "
              + "message_hash BINARY(32) NOT NULL, "
              + "consumed_at BIGINT NOT NULL, "
              + "projected_at BIGINT, "
              + "updated_at BIGINT NOT NULL, "
              + "PRIMARY KEY (scope, message_id))",
          "CREATE INDEX IF NOT EXISTS idx_inbox_state ON inbox_message (state, consumed_at)")),
      new Migration(2, "redeliveries with other bytes: count and time of the latest", List.of(
          "ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS mismatches INT DEFAULT 0 NOT NULL",
          "ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS last_mismatch_at BIGINT")));

  private InboxSchema() {}
}
