package dev.outboxreplay.server.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.HttpContract.ReconcileStatus;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.server.HandlerResponse;
import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
import dev.outboxreplay.server.internal.IdempotencyRecords.Record;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Idempotency-Key protocol over {@link IdempotencyRecords}: the first request with a key
 * runs its handler, and the handler's effect and the stored answer commit in one transaction; a
 * repeat with the same payload gets the stored answer, a different payload 422, a repeat while
 * the first runs 409. Also answers reconciliation. Thread-safe.
 */
public final class IdempotencyProtocol implements RequestProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyProtocol.class);

  private final H2Database database;
  private final IdempotencyRecords records;
  private final Clock clock;
  private final Duration retention;

  public IdempotencyProtocol(H2Database database, IdempotencyRecords records, Clock clock,
      Duration retention) {
    this.database = database;
    this.records = records;
    this.clock = clock;
    this.retention = retention;
  }

  @Override
  public Answer process(ServerRequest request, OperationHandler handler) throws SQLException {
    byte[] hash = sha256(request.body());
    Instant now = clock.instant();
    Optional<Record> existing = records.start(request.tenant(), request.idempotencyKey(),
        request.operation(), hash, now, now.plus(retention));
    if (existing.isPresent()) {
      return answerExisting(existing.get(), hash);
    }
    HandlerResponse response;
    try (Connection tx = database.dataSource().getConnection()) {
      tx.setAutoCommit(false);
      try {
        response = handler.handle(tx, request);
        records.commit(tx, request.tenant(), request.idempotencyKey(), response.status(),
            response.contentType(), response.body(), clock.instant());
        tx.commit();
        database.afterCommit(tx);
      } catch (Exception e) {
        tx.rollback();
        // Stored, answered by reconciliation and logged: the class only. An exception's message
        // may quote the request body (a parser's error does), which is the client's data.
        records.fail(request.tenant(), request.idempotencyKey(),
            "handler_failed:" + e.getClass().getSimpleName(), clock.instant());
        LOG.warn("handler for {} failed; nothing committed, the key may be retried: {}",
            request.operation(), withoutMessage(e));
        return Answer.problem(500, "Internal Server Error",
            "the operation failed and took no effect; retry with the same key");
      }
    }
    return Answer.committed(response.status(), response.contentType(), response.body(),
        Map.of(HttpContract.REPLAYED, "false"));
  }

  private static Answer answerExisting(Record existing, byte[] hash) {
    if (!existing.samePayload(hash)) {
      return Answer.problem(422, "Unprocessable Content",
          "this Idempotency-Key was used with a different payload");
    }
    if (existing.state() == IdempotencyRecords.State.COMMITTED) {
      return Answer.of(existing.responseStatus(), existing.contentType(),
          existing.responseBody(), Map.of(HttpContract.REPLAYED, "true"));
    }
    return Answer.problem(409, Answer.IN_PROGRESS_TYPE, "Conflict",
        "a request with this Idempotency-Key is being processed; retry later", Map.of());
  }

  /** The reconciliation document for {@code key} of {@code tenant} ({@link HttpContract}). */
  public Answer reconcile(String tenant, String key) throws SQLException {
    Optional<Record> found = records.find(tenant, key);
    ObjectNode answer = Answer.JSON.createObjectNode();
    if (found.isEmpty()) {
      answer.put("status", ReconcileStatus.NOT_SEEN.wireName());
    } else {
      Record r = found.get();
      switch (r.state()) {
        case COMMITTED -> {
          answer.put("status", ReconcileStatus.COMMITTED.wireName());
          answer.putObject("response").put("status", r.responseStatus())
              .put("contentType", r.contentType())
              .put("bodyBase64", Base64.getEncoder().encodeToString(
                  r.responseBody() == null ? new byte[0] : r.responseBody()));
        }
        case FAILED -> answer.put("status", ReconcileStatus.FAILED.wireName())
            .put("error", r.error());
        case STARTED -> answer.put("status", ReconcileStatus.PROCESSING.wireName());
      }
    }
    try {
      return Answer.of(200, "application/json", Answer.JSON.writeValueAsBytes(answer), Map.of());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write a reconciliation answer", e);
    }
  }

  /**
   * An exception for the log without its message, which may quote request bytes: its class and
   * where it was thrown, for each cause.
   */
  public static String withoutMessage(Throwable e) {
    StringBuilder out = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (out.length() > 0) {
        out.append(" <- caused by ");
      }
      out.append(t.getClass().getName());
      StackTraceElement[] frames = t.getStackTrace();
      if (frames.length > 0) {
        out.append(" at ").append(frames[0]);
      }
    }
    return out.toString();
  }

  private static byte[] sha256(byte[] body) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(body);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
