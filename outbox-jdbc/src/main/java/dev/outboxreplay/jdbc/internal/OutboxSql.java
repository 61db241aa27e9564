package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.ErrorInfo;
import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStore.AuditEntry;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.Reason;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.internal.EntityOrder;
import dev.outboxreplay.jdbc.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The outbox's statements after accept. Every state change is one
 * {@code UPDATE ... WHERE command_id = ? AND status = ? AND fencing_token = ?}, whose new row is
 * read back in the same statement (the dialect's update-returning) or, where the caller holds the
 * row as read under that fence (marking claimed rows sending, an outcome for a held row), built
 * from the held row and the columns set. No row changed means "fenced off", reported as
 * {@link FencedOffException}, never ignored.
 */
public final class OutboxSql {
  /** The fence of every state change: the row, in the status and under the token read. */
  static final String FENCE = "command_id = ? AND status = ? AND fencing_token = ?";
  private static final String WHERE_FENCE = " WHERE " + FENCE;
  private static final int MIN_CLAIM_WINDOW = 256;
  private static final String NOT_HEAD =
      "UPDATE outbox_command SET entity_head = FALSE WHERE command_id = ?";
  /**
   * The oldest open row of an entity becomes its head (after the previous head ended). The
   * ORDER BY names every column of idx_outbox_entity_open so the engine reads one index entry
   * instead of sorting the entity's whole backlog.
   */
  public static final String PROMOTE_NEXT_HEAD = "UPDATE outbox_command SET entity_head = TRUE "
      + "WHERE command_id = (SELECT command_id FROM outbox_command "
      + "WHERE entity_key = ? AND terminal = FALSE ORDER BY entity_key, terminal, seq LIMIT 1) "
      + "AND entity_head = FALSE";
  private static final String REPAIR_HEADS = "UPDATE outbox_command SET entity_head = TRUE "
      + "WHERE claim_due = " + OutboxTables.BLOCKED + " AND NOT EXISTS (SELECT 1 "
      + "FROM outbox_command p WHERE p.entity_key = outbox_command.entity_key "
      + "AND p.terminal = FALSE AND p.seq < outbox_command.seq)";
  private static final String SELECT = "SELECT " + OutboxTables.COLUMNS + " FROM ";
  /** Claimed to sending, under the claim's fence; sets the lease end and the update time. */
  private static final String MARK_SENDING = "UPDATE outbox_command SET status = 'sending', "
      + "lease_expires_at = ?, updated_at = ?" + WHERE_FENCE;

  /**
   * An outcome recorded under the fence: a column the outcome does not give keeps its value
   * ({@link #completed} builds the same row in Java).
   */
  private static final String COMPLETE = "UPDATE outbox_command SET "
      + "status = ?, attempt = attempt + ?, next_attempt_at = COALESCE(?, next_attempt_at), "
      + "first_sent_at = CASE WHEN ? THEN COALESCE(first_sent_at, ?) ELSE first_sent_at END, "
      + "claim_owner = NULL, claimed_from = NULL, lease_expires_at = NULL, "
      + "last_error_code = COALESCE(?, last_error_code), "
      + "last_error_message = CASE WHEN ? IS NULL THEN last_error_message ELSE ? END, "
      + "last_error_at = COALESCE(?, last_error_at), "
      + "response_status = COALESCE(?, response_status), "
      + "response_body = CASE WHEN ? IS NULL THEN response_body ELSE ? END, "
      + "updated_at = ?" + WHERE_FENCE;

  private final OutboxRows rows;
  private final Dialect dialect;
  private final OutboxAuditSql auditSql;
  private final String candidates;
  private final String nextOfEntity;
  private final String claim;
  private final String markSending;
  private final String complete;
  private final String release;
  private final String requeue;

  /** {@code auditSql} writes the entry of every state change, in the change's transaction. */
  public OutboxSql(OutboxRows rows, Dialect dialect, OutboxAuditSql auditSql) {
    this.rows = rows;
    this.dialect = dialect;
    this.auditSql = auditSql;
    this.candidates = candidates(dialect);
    this.nextOfEntity = "SELECT c.command_id, c.status, c.fencing_token, "
        + "c.next_attempt_at, c.session_version FROM outbox_command c"
        + dialect.indexHint("idx_outbox_entity_open")
        + " WHERE c.entity_key = ? AND c.terminal = FALSE "
        + "AND c.seq > ? AND EXISTS (SELECT 1 FROM outbox_command h WHERE h.command_id = ? "
        + "AND h.status = 'sending' AND h.fencing_token = ?) "
        + "ORDER BY c.entity_key, c.terminal, c.seq LIMIT 1";
    // a claim's token comes from the file's one sequence: larger than every token before it
    this.claim = returning("UPDATE outbox_command SET status = 'claimed', claimed_from = ?, "
        + "claim_owner = ?, fencing_token = " + dialect.nextFencingToken()
        + ", lease_expires_at = ?, updated_at = ?" + WHERE_FENCE);
    this.markSending = returning(MARK_SENDING);
    this.complete = returning(COMPLETE);
    this.release = returning("UPDATE outbox_command SET status = claimed_from, "
        + "next_attempt_at = ?, claim_owner = NULL, claimed_from = NULL, "
        + "lease_expires_at = NULL, updated_at = ?" + WHERE_FENCE);
    this.requeue = returning("UPDATE outbox_command SET status = 'queued', attempt = 0, "
        + "next_attempt_at = ?, updated_at = ?, entity_head = TRUE" + WHERE_FENCE);
  }

  private String returning(String update) {
    return dialect.updateReturning(update, OutboxTables.COLUMNS);
  }

  /**
   * Due rows flagged as entity heads, oldest due first, each with whether an earlier row of its
   * entity is still open ({@code behind}). Reads idx_outbox_claim from its start up to
   * {@code now}: never terminal rows, nor rows already known to wait behind their head. A new
   * row is flagged head at insert without looking (accept stays one plain insert); the first
   * claim that finds it behind an open row clears the flag, so every later claim skips it. A due
   * {@code sending} row is one whose lease expired; the claim first records it as unknown.
   */
  public static String candidates(Dialect dialect) {
    return "SELECT command_id, status, fencing_token, claimed_from, "
        + "EXISTS (SELECT 1 FROM outbox_command p WHERE p.entity_key = c.entity_key "
        + "AND p.terminal = FALSE AND p.seq < c.seq) AS behind "
        // the hint: the status range would read the backlog behind busy heads too
        + "FROM outbox_command c" + dialect.indexHint("idx_outbox_claim")
        + " WHERE c.claim_due <= ? AND c.status IN ('queued', 'retryable_failed', 'unknown') "
        + "ORDER BY c.claim_due, c.seq LIMIT ?";
  }

  /**
   * Claims up to {@code limit} due entity heads; the caller commits. Rows found waiting behind an
   * open row of their entity lose their head flag (in the same transaction) and the range is
   * read again, so the claim still fills up when such rows came first.
   */
  public List<OutboxRecord> claim(Connection c, String owner, Instant leaseExpiresAt, int limit,
      Instant now) throws SQLException {
    List<OutboxRecord> claimed = new ArrayList<>();
    List<AuditEntry> audits = new ArrayList<>();
    boolean metBacklog = false;
    while (true) {
      // Once rows behind a head turn up, read a few hundred at a time: a backlog met for the
      // first time is cleared in a few reads, not one read per `limit` rows.
      int window = metBacklog ? Math.max(limit - claimed.size(), MIN_CLAIM_WINDOW)
          : limit - claimed.size();
      List<Candidate> due = dueCandidates(c, now, window);
      int cleared = 0;
      try (PreparedStatement notHead = c.prepareStatement(NOT_HEAD);
          PreparedStatement claim = c.prepareStatement(this.claim)) {
        for (Candidate candidate : due) {
          if (!EntityOrder.mayClaim(candidate.behind())) {
            dialect.setId(notHead, 1, candidate.id());
            notHead.executeUpdate();
            cleared++;
          } else if (claimed.size() < limit) {
            claimOne(c, claim, candidate, owner, leaseExpiresAt, now, audits)
                .ifPresent(claimed::add);
          }
        }
      }
      if (claimed.size() == limit || cleared == 0 || due.size() < window) {
        auditSql.write(c, audits);
        return claimed; // full, or the due range holds no more heads to find
      }
      metBacklog = true;
    }
  }

  private record Candidate(UUID id, Status status, long token, Status claimedFrom,
      boolean behind) {}

  private List<Candidate> dueCandidates(Connection c, Instant now, int limit)
      throws SQLException {
    List<Candidate> candidates = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(this.candidates)) {
      ps.setLong(1, now.toEpochMilli());
      ps.setInt(2, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String from = rs.getString(4);
          candidates.add(new Candidate(dialect.getId(rs, 1),
              Status.fromWireName(rs.getString(2)), rs.getLong(3),
              from == null ? null : Status.fromWireName(from), rs.getBoolean(5)));
        }
      }
    }
    return candidates;
  }

  /** Claims {@code due}; the claim's audit entry goes to {@code audits}, for the caller to write. */
  private Optional<OutboxRecord> claimOne(Connection c, PreparedStatement claim, Candidate due,
      String owner, Instant leaseExpiresAt, Instant now, List<AuditEntry> audits)
      throws SQLException {
    Status from = due.status();
    StateMachine.requireAllowed(from, Status.CLAIMED);
    dialect.advanceFencingToken(c);
    claim.setString(1, from.wireName());
    claim.setString(2, owner);
    claim.setLong(3, leaseExpiresAt.toEpochMilli());
    claim.setLong(4, now.toEpochMilli());
    dialect.setId(claim, 5, due.id());
    claim.setString(6, from.wireName());
    claim.setLong(7, due.token());
    Optional<OutboxRecord> row = singleRow(claim);
    row.ifPresent(r -> audits.add(OutboxAuditSql.entry(r, from, Reason.CLAIMED, now)));
    return row;
  }

  /**
   * Claims the open row right after {@code sending} in its entity when it is queued (never
   * attempted), due at {@code now} and accepted under {@code sessionVersion} or later, while
   * {@code sending} is still sending under its token; the caller commits.
   */
  public Optional<OutboxRecord> claimNextOfEntity(Connection c, String owner,
      Instant leaseExpiresAt, OutboxRecord sending, long sessionVersion, Instant now)
      throws SQLException {
    Candidate next;
    try (PreparedStatement ps = c.prepareStatement(nextOfEntity)) {
      ps.setString(1, sending.entityKey());
      ps.setLong(2, sending.acceptSequence());
      dialect.setId(ps, 3, sending.commandId().value());
      ps.setLong(4, sending.fencingToken());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || !EntityOrder.mayFollow(Status.fromWireName(rs.getString(2)),
            Instant.ofEpochMilli(rs.getLong(4)), rs.getLong(5), sessionVersion, now)) {
          return Optional.empty();
        }
        next = new Candidate(dialect.getId(rs, 1), Status.QUEUED, rs.getLong(3), null,
            false);
      }
    }
    List<AuditEntry> audits = new ArrayList<>(1);
    Optional<OutboxRecord> claimed;
    try (PreparedStatement claim = c.prepareStatement(this.claim)) {
      claimed = claimOne(c, claim, next, owner, leaseExpiresAt, now, audits);
    }
    auditSql.write(c, audits);
    return claimed;
  }

  public OutboxRecord markSending(Connection c, CommandId id, long token, Instant leaseExpiresAt,
      Instant now) throws SQLException {
    return orFenced(c, markSendingIfHeld(c, id, token, leaseExpiresAt, now), id, Status.CLAIMED,
        token);
  }

  /** Marks one claimed row sending; empty when the claim was lost. The caller commits. */
  public Optional<OutboxRecord> markSendingIfHeld(Connection c, CommandId id, long token,
      Instant leaseExpiresAt, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(markSending)) {
      ps.setLong(1, leaseExpiresAt.toEpochMilli());
      ps.setLong(2, now.toEpochMilli());
      bindCas(ps, 3, id, Status.CLAIMED, token);
      Optional<OutboxRecord> sending = singleRow(ps);
      if (sending.isPresent()) {
        audit(c, sending.get(), Status.CLAIMED, Reason.SENDING, now);
      }
      return sending;
    }
  }

  /**
   * Marks each of {@code claimed} that is still held under its claim's token sending, and writes
   * their audit entries together; the caller commits.
   *
   * @return the rows now sending, in the order given; a row whose claim was lost is left out
   */
  public List<OutboxRecord> markSendingIfHeld(Connection c, List<OutboxRecord> claimed,
      Instant leaseExpiresAt, Instant now) throws SQLException {
    List<OutboxRecord> sending = new ArrayList<>(claimed.size());
    List<AuditEntry> audits = new ArrayList<>(claimed.size());
    try (PreparedStatement ps = c.prepareStatement(MARK_SENDING)) {
      for (OutboxRecord r : claimed) {
        ps.setLong(1, leaseExpiresAt.toEpochMilli());
        ps.setLong(2, now.toEpochMilli());
        bindCas(ps, 3, r.commandId(), Status.CLAIMED, r.fencingToken());
        if (ps.executeUpdate() == 1) {
          OutboxRecord marked = sending(r, leaseExpiresAt, now);
          sending.add(marked);
          audits.add(OutboxAuditSql.entry(marked, Status.CLAIMED, Reason.SENDING, now));
        }
      }
    }
    auditSql.write(c, audits);
    return sending;
  }

  /**
   * {@code claimed} as {@link #MARK_SENDING} leaves it. The update is fenced on the claim's
   * status and token, and nothing else writes a claimed row's columns while the claim holds, so
   * the row read by the claim plus the three columns set is the stored row: no need to read it
   * back.
   */
  private static OutboxRecord sending(OutboxRecord claimed, Instant leaseExpiresAt,
      Instant now) {
    return new OutboxRecord(claimed.commandId(), claimed.idempotencyKey(), claimed.operation(),
        claimed.entityKey(), claimed.payload(), Status.SENDING, claimed.attempt(),
        claimed.nextAttemptAt(), claimed.claimOwner(), claimed.claimedFrom(),
        claimed.fencingToken(), millis(leaseExpiresAt),
        claimed.sessionVersion(), claimed.lastError(), claimed.response(), claimed.createdAt(),
        millis(now), claimed.schemaVersion(),
        claimed.acceptSequence(), claimed.firstSentAt());
  }

  public OutboxRecord complete(Connection c, CommandId id, long token, Status expected,
      Outcome outcome, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(complete)) {
      bindComplete(ps, id, token, expected, outcome, now);
      return ended(c, orFenced(c, singleRow(ps), id, expected, token), expected, outcome, now);
    }
  }

  /**
   * Records {@code outcome} for {@code held}, the row as the caller's claim or mark returned it:
   * the fenced update reads nothing back, and the row returned is {@code held} with the
   * outcome's columns set, as {@link #COMPLETE} sets them. Nothing else writes a held row's
   * columns without changing its status or token, which the fence checks. When {@code held} is
   * not in {@code expected}, the row is read back instead.
   */
  public OutboxRecord complete(Connection c, OutboxRecord held, Status expected, Outcome outcome,
      Instant now) throws SQLException {
    if (held.status() != expected) {
      return complete(c, held.commandId(), held.fencingToken(), expected, outcome, now);
    }
    try (PreparedStatement ps = c.prepareStatement(COMPLETE)) {
      bindComplete(ps, held.commandId(), held.fencingToken(), expected, outcome, now);
      if (ps.executeUpdate() != 1) {
        throw fencedOff(c, held.commandId(), expected, held.fencingToken());
      }
    }
    return ended(c, completed(held, outcome, now), expected, outcome, now);
  }

  /** Audits the recorded outcome, and hands the entity to its next row when this one ended. */
  private OutboxRecord ended(Connection c, OutboxRecord after, Status expected, Outcome outcome,
      Instant now) throws SQLException {
    audit(c, after, expected, outcome.reason(), now);
    if (EntityOrder.endsHead(outcome.status())) {
      promoteNextHead(c, after.entityKey());
    }
    return after;
  }

  private void bindComplete(PreparedStatement ps, CommandId id, long token, Status expected,
      Outcome outcome, Instant now) throws SQLException {
    ErrorInfo error = outcome.error();
    StoredResponse response = outcome.response();
    ps.setString(1, outcome.status().wireName());
    ps.setInt(2, outcome.countsAsAttempt() ? 1 : 0);
    setMillis(ps, 3, outcome.status().isTerminal() ? null : outcome.nextAttemptAt());
    ps.setBoolean(4, outcome.reason().mayHaveReachedReceiver());
    ps.setLong(5, now.toEpochMilli());
    ps.setString(6, error == null ? null : error.code());
    ps.setString(7, error == null ? null : error.code());
    ps.setString(8, error == null ? null : error.message());
    setMillis(ps, 9, error == null ? null : error.at());
    if (response == null) {
      ps.setNull(10, Types.INTEGER);
    } else {
      ps.setInt(10, response.status());
    }
    ps.setString(11, response == null ? null : "y");
    ps.setBytes(12, response == null ? null : response.body());
    ps.setLong(13, now.toEpochMilli());
    bindCas(ps, 14, id, expected, token);
  }

  /**
   * {@code held} as {@link #COMPLETE} leaves it after recording {@code outcome} at {@code now},
   * with every time at the millisecond the table keeps.
   */
  static OutboxRecord completed(OutboxRecord held, Outcome outcome, Instant now) {
    ErrorInfo error = outcome.error();
    StoredResponse response = outcome.response();
    Instant at = millis(now);
    Instant firstSent = outcome.reason().mayHaveReachedReceiver() && held.firstSentAt() == null
        ? at : held.firstSentAt();
    return new OutboxRecord(held.commandId(), held.idempotencyKey(), held.operation(),
        held.entityKey(), held.payload(), outcome.status(),
        held.attempt() + (outcome.countsAsAttempt() ? 1 : 0),
        outcome.status().isTerminal() ? held.nextAttemptAt() : millis(outcome.nextAttemptAt()),
        null, null, held.fencingToken(), null, held.sessionVersion(),
        error == null ? held.lastError()
            : new ErrorInfo(error.code(), error.message(), millis(error.at())),
        response == null ? held.response() : response,
        held.createdAt(), at, held.schemaVersion(), held.acceptSequence(), firstSent);
  }

  private static Instant millis(Instant at) {
    return Instant.ofEpochMilli(at.toEpochMilli());
  }

  private static void promoteNextHead(Connection c, String entityKey) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PROMOTE_NEXT_HEAD)) {
      ps.setString(1, entityKey);
      ps.executeUpdate();
    }
  }

  /**
   * Flags as head every waiting row that has no earlier open row of its entity but is not
   * flagged. That happens only when a claim cleared the flag of a row it saw behind an open row
   * while that row was being completed in another transaction, whose hand-over still saw the
   * flag set. Reads the {@code BLOCKED} range of idx_outbox_claim only. The caller commits.
   *
   * @return how many rows were repaired
   */
  public int repairEntityHeads(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(REPAIR_HEADS)) {
      return ps.executeUpdate();
    }
  }

  public OutboxRecord release(Connection c, CommandId id, long token, Instant nextAttemptAt,
      Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(release)) {
      ps.setLong(1, nextAttemptAt.toEpochMilli());
      ps.setLong(2, now.toEpochMilli());
      bindCas(ps, 3, id, Status.CLAIMED, token);
      return audited(c, orFenced(c, singleRow(ps), id, Status.CLAIMED, token), Status.CLAIMED,
          Reason.RELEASED, now);
    }
  }

  public Optional<OutboxRecord> requeue(Connection c, OutboxRecord current, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(requeue)) {
      ps.setLong(1, now.toEpochMilli());
      ps.setLong(2, now.toEpochMilli());
      bindCas(ps, 3, current.commandId(), current.status(), current.fencingToken());
      Optional<OutboxRecord> requeued = singleRow(ps);
      if (requeued.isPresent()) {
        audit(c, requeued.get(), current.status(), Reason.OPERATOR_REQUEUE, now);
      }
      return requeued;
    }
  }

  public Optional<Instant> nextDueAt(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT MIN(claim_due) FROM outbox_command");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      long due = rs.getLong(1);
      return rs.wasNull() || due >= OutboxTables.BLOCKED
          ? Optional.empty() : Optional.of(Instant.ofEpochMilli(due));
    }
  }

  private OutboxRecord audited(Connection c, OutboxRecord after, Status from, Reason reason,
      Instant now) throws SQLException {
    audit(c, after, from, reason, now);
    return after;
  }

  AuditEntry audit(Connection c, OutboxRecord after, Status from, Reason reason,
      Instant now) throws SQLException {
    AuditEntry entry = OutboxAuditSql.entry(after, from, reason, now);
    auditSql.write(c, List.of(entry));
    return entry;
  }

  /** The first acked command of {@code current}'s entity accepted after it, if any. */
  public Optional<OutboxRecord> firstAckedAfter(Connection c, OutboxRecord current)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SELECT + "outbox_command"
        + dialect.indexHint("idx_outbox_entity_open") // the entity's rows, not the acked range
        + " WHERE entity_key = ? AND seq > ? AND status = 'acked' ORDER BY seq LIMIT 1")) {
      ps.setString(1, current.entityKey());
      ps.setLong(2, current.acceptSequence());
      return singleRow(ps);
    }
  }

  public Optional<OutboxRecord> find(Connection c, CommandId id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        SELECT + "outbox_command WHERE command_id = ?")) {
      dialect.setId(ps, 1, id.value());
      return singleRow(ps);
    }
  }

  public Optional<OutboxRecord> findByKey(Connection c, IdempotencyKey key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        SELECT + "outbox_command WHERE idempotency_key = ?")) {
      ps.setString(1, key.value());
      return singleRow(ps);
    }
  }

  public List<OutboxRecord> list(Connection c, Status status, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        SELECT + "outbox_command WHERE status = ? ORDER BY seq LIMIT ?")) {
      ps.setString(1, status.wireName());
      ps.setInt(2, limit);
      List<OutboxRecord> result = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          result.add(rows.read(rs));
        }
      }
      return result;
    }
  }

  /** Up to {@code limit} commands accepted after the one with {@code seq} {@code after}. */
  public List<OutboxRecord> page(Connection c, long after, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        SELECT + "outbox_command WHERE seq > ? ORDER BY seq LIMIT ?")) {
      ps.setLong(1, after);
      ps.setInt(2, limit);
      List<OutboxRecord> result = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          result.add(rows.read(rs));
        }
      }
      return result;
    }
  }

  void bindCas(PreparedStatement ps, int first, CommandId id, Status status,
      long token) throws SQLException {
    dialect.setId(ps, first, id.value());
    ps.setString(first + 1, status.wireName());
    ps.setLong(first + 2, token);
  }

  private static void setMillis(PreparedStatement ps, int index, Instant at) throws SQLException {
    if (at == null) {
      ps.setNull(index, Types.BIGINT);
    } else {
      ps.setLong(index, at.toEpochMilli());
    }
  }

  private Optional<OutboxRecord> singleRow(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() ? Optional.of(rows.read(rs)) : Optional.empty();
    }
  }

  private OutboxRecord orFenced(Connection c, Optional<OutboxRecord> updated, CommandId id,
      Status expected, long token) throws SQLException {
    if (updated.isPresent()) {
      return updated.get();
    }
    throw fencedOff(c, id, expected, token);
  }

  /** The refusal of a change fenced on {@code expected} and {@code token}, with the row as now. */
  private FencedOffException fencedOff(Connection c, CommandId id, Status expected, long token)
      throws SQLException {
    Optional<OutboxRecord> current = find(c, id);
    return new FencedOffException(id, expected, token,
        current.map(OutboxRecord::status).orElse(null),
        current.map(OutboxRecord::fencingToken).orElse(0L));
  }
}
