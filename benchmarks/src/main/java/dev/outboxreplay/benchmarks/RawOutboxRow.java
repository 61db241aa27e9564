package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Payload;
import dev.outboxreplay.internal.CommandIdGenerator;
import dev.outboxreplay.jdbc.JdbcDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * The row {@code Outbox.accept} writes for a {@code note.put} command, inserted by plain JDBC
 * with its payload already canonical: the least an accept of that command can write, with none
 * of the library's work (canonical JSON, validation, key checks). Uses the same time-ordered ids
 * as accept, so both append to the key index. Thread-safe.
 */
final class RawOutboxRow {
  private static final String INSERT = "INSERT INTO outbox_command (command_id, "
      + "idempotency_key, operation, entity_key, payload, payload_hash, status, attempt, "
      + "next_attempt_at, fencing_token, session_version, created_at, updated_at, schema_version) "
      + "VALUES (?, ?, 'note.put', ?, ?, ?, 'queued', 0, ?, 0, 0, ?, ?, 1)";

  private final CommandIdGenerator ids =
      new CommandIdGenerator(Clock.systemUTC(), new SplittableRandom());

  /** Inserts one row on {@code c}, in its open transaction; the caller commits. */
  void insert(JdbcDatabase db, Connection c, String entity, byte[] canonicalJson)
      throws SQLException {
    Payload payload = Payload.ofCanonicalBytes(canonicalJson);
    UUID id = ids.next().value();
    long now = System.currentTimeMillis();
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      db.dialect().setId(ps, 1, id);
      ps.setString(2, "note.put:" + entity + ":" + id);
      ps.setString(3, entity);
      ps.setBytes(4, canonicalJson);
      ps.setBytes(5, payload.sha256());
      ps.setLong(6, now);
      ps.setLong(7, now);
      ps.setLong(8, now);
      ps.executeUpdate();
    }
  }
}
