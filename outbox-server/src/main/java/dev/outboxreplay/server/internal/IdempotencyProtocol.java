package dev.outboxreplay.server.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.HttpContract.ReconcileStatus;
import dev.outboxreplay.receiver.Claim;
import dev.outboxreplay.receiver.IdempotencyRecord;
import dev.outboxreplay.receiver.IdempotencyRecordStore;
import dev.outboxreplay.receiver.KeyTakenOverException;
import dev.outboxreplay.receiver.RecordState;
import dev.outboxreplay.receiver.StoredAnswer;
import dev.outboxreplay.server.HandlerResponse;
import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
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
 * The Idempotency-Key protocol over an {@link IdempotencyRecordStore}: the first request with a
 * key runs its handler, and the handler's effect and the stored answer commit in one
 * transaction; a repeat with the same payload gets the stored answer, a different payload 422, a
 * repeat while the first runs 409. Also answers reconciliation. Thread-safe.
 */
public final class IdempotencyProtocol implements RequestProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyProtocol.class);

  private final IdempotencyRecordStore<Connection> records;
  private final Clock clock;
  private final Duration retention;

  public IdempotencyProtocol(IdempotencyRecordStore<Connection> records, Clock clock,
      Duration retention) {
    this.records = records;
    this.clock = clock;
    this.retention = retention;
  }

  @Override
  public Answer process(ServerRequest request, OperationHandler handler) throws SQLException {
    byte[] hash = sha256(request.body());
    Instant now = clock.instant();
    Claim claim = records.claim(request.tenant(), request.idempotencyKey(),
        request.operation(), hash, now, now.plus(retention));
    if (claim instanceof Claim.Standing standing) {
      return answerExisting(standing.record(), hash);
    }
    Claim.Owned owned = (Claim.Owned) claim;
    StoredAnswer stored;
    try {
      stored = records.complete(owned, tx -> {
        HandlerResponse response = handler.handle(tx, request);
        return new StoredAnswer(response.status(), response.contentType(), response.body());
      }, clock.instant());
    } catch (KeyTakenOverException e) {
      // this node held the key past its lease and another took it over: nothing of this run
      // committed, and the other node's answer is the one a retry gets
      LOG.warn("{}: answered as in progress", e.getMessage());
      return inProgress();
    } catch (Exception e) {
      // Stored, answered by reconciliation and logged: the class only. An exception's message
      // may quote the request body (a parser's error does), which is the client's data.
      records.fail(owned, "handler_failed:" + e.getClass().getSimpleName(), clock.instant());
      LOG.warn("handler for {} failed; nothing committed, the key may be retried: {}",
          request.operation(), withoutMessage(e));
      return Answer.problem(500, "Internal Server Error",
          "the operation failed and took no effect; retry with the same key");
    }
    return Answer.committed(stored.status(), stored.contentType(), stored.body(),
        Map.of(HttpContract.REPLAYED, "false"));
  }

  private static Answer answerExisting(IdempotencyRecord existing, byte[] hash) {
    if (!existing.samePayload(hash)) {
      return Answer.problem(422, "Unprocessable Content",
          "this Idempotency-Key was used with a different payload");
    }
    if (existing.state() == RecordState.COMMITTED) {
      StoredAnswer a = existing.answer();
      return Answer.of(a.status(), a.contentType(), a.body(),
          Map.of(HttpContract.REPLAYED, "true"));
    }
    return inProgress();
  }

  private static Answer inProgress() {
    return Answer.problem(409, Answer.IN_PROGRESS_TYPE, "Conflict",
        "a request with this Idempotency-Key is being processed; retry later", Map.of());
  }

  /** The reconciliation document for {@code key} of {@code tenant} ({@link HttpContract}). */
  public Answer reconcile(String tenant, String key) throws SQLException {
    Optional<IdempotencyRecord> found = records.find(tenant, key);
    ObjectNode answer = Answer.JSON.createObjectNode();
    if (found.isEmpty()) {
      answer.put("status", ReconcileStatus.NOT_SEEN.wireName());
    } else {
      IdempotencyRecord r = found.get();
      switch (r.state()) {
        case COMMITTED -> {
          answer.put("status", ReconcileStatus.COMMITTED.wireName());
          answer.putObject("response").put("status", r.answer().status())
              .put("contentType", r.answer().contentType())
              .put("bodyBase64", Base64.getEncoder().encodeToString(r.answer().body()));
        }
        case FAILED -> answer.put("status", ReconcileStatus.FAILED.wireName())
            .put("error", r.error());
        case STARTED -> {
          if (r.abandonedAt(clock.instant())) {
            // its node stopped before committing; a resend with the key takes it over
            answer.put("status", ReconcileStatus.FAILED.wireName())
                .put("error", "abandoned: the node processing it stopped before committing");
          } else {
            answer.put("status", ReconcileStatus.PROCESSING.wireName());
          }
        }
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
