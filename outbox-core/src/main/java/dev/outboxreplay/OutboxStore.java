package dev.outboxreplay;

import java.time.Instant;

/**
 * Durable home of outbox rows. One implementation per storage module (for example
 * {@code outbox-jdbc}'s store on H2 or SQLite); every implementation passes the store contract
 * tests in {@code outbox-testkit}.
 *
 * <p>Its row operations are grouped by who calls them: {@link ReplayRows}, what {@link Outbox}
 * and the {@link Replayer} write while commands move through their states; {@link
 * RetentionRows}, the history retention the replayer (and {@code outbox compact}) runs; {@link
 * OperatorRows}, what health checks, an application's problem list and the operator tools read
 * and repair. The decisions (which outcome a response is, when a lease expired, when history is
 * old enough) are made in the core and passed in; the store keeps rows and their
 * compare-and-set conditions.
 *
 * <p>Every write after a claim is conditional on (command id, expected status, fencing token): a
 * mismatch throws {@link FencedOffException} and changes nothing. Implementations are thread-safe
 * and safe to share between processes that open the same database.
 *
 * <p>Every method may throw {@link OutboxStorageException}: {@linkplain
 * OutboxStorageException#retryable() retryable} for a passing condition (another process handing
 * the shared file over, a lock race, a row lock not released in time, no pooled connection free),
 * fatal otherwise (a corrupt, foreign or newer file, no access, an unreadable row).
 *
 * @param <T> the store's transaction handle (for JDBC stores {@code java.sql.Connection}), used
 *     to join a caller's own transaction
 */
public interface OutboxStore<T>
    extends ReplayRows<T>, RetentionRows, OperatorRows, AutoCloseable {

  /**
   * A lease {@link ReplayRows#recoverExpiredLeases} ended: the row as it is after, and the change
   * as audited. The replayer reports it to listeners with the row's operation and entity, which
   * the audit does not hold.
   */
  record RecoveredLease(OutboxRecord command, AuditEntry change) {}

  /** Work run inside one store transaction. */
  @FunctionalInterface
  interface TransactionWork<T, R> {
    R run(T transaction) throws Exception;
  }

  /**
   * One audited status change.
   *
   * @param commandId the command
   * @param idempotencyKey its key
   * @param from status before (null for none)
   * @param to status after
   * @param fencingToken token of the change
   * @param reason why
   * @param at when
   */
  record AuditEntry(CommandId commandId, IdempotencyKey idempotencyKey, Status from, Status to,
      long fencingToken, Reason reason, Instant at) {}

  /** Releases the store's resources. Rows already written stay durable. */
  @Override
  void close();
}
