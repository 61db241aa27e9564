package dev.outboxreplay;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The rows {@link Outbox} and the {@link Replayer} write while commands move through their
 * states: accept, claim, send, record an outcome, give back, recover expired leases, and the
 * time the next row falls due. Part of {@link OutboxStore}; see it for the compare-and-set rule
 * every write after a claim follows, thread-safety and failures.
 *
 * @param <T> the store's transaction handle
 */
public interface ReplayRows<T> {

  /**
   * Writes a batch atomically and durably: when this returns, every row survives a process kill
   * (and, in a power-loss durability mode, a power cut). A command whose id or key is already
   * stored with the same intent is not written again; its stored record is returned in its place.
   *
   * @return one record per command, in order
   * @throws IdempotencyConflictException when a command reuses an id or key with a different
   *     intent; nothing of the batch is written
   * @throws OutboxStorageException when the database fails; nothing of the batch is written
   */
  List<OutboxRecord> insert(List<PreparedCommand> batch);

  /**
   * Like {@link #insert(List)} but inside the caller's open transaction: the rows commit or roll
   * back with it, and are durable only once the caller commits. Never commits or closes it.
   */
  List<OutboxRecord> insert(T transaction, List<PreparedCommand> batch);

  /**
   * Atomically takes up to {@code limit} due rows for {@code owner}: queued, retryable_failed or
   * unknown rows with {@code next_attempt_at <= now}. Rows are taken only when no earlier row of
   * the same entity is still non-terminal. Each taken row gets status claimed, a fencing token
   * larger than any it had before, and a lease to {@code now + lease}. Rows whose lease expired
   * are left to {@link #recoverExpiredLeases}, which the replayer calls first.
   *
   * @return the claimed rows, oldest due first; empty when nothing is due or others won the race
   */
  List<OutboxRecord> claim(String owner, Duration lease, int limit, Instant now);

  /**
   * Like {@link #claim(String, Duration, int, Instant)} inside the caller's open transaction, so
   * that the replayer can record answers, claim the next rows and mark them sending in one
   * commit. The rows are claimed only once the caller commits; after a rollback nothing of the
   * claim is left. Never commits or closes the transaction.
   *
   * @throws IllegalArgumentException for a blank owner, a lease that is not positive or a limit
   *     below 1
   */
  List<OutboxRecord> claim(T transaction, String owner, Duration lease, int limit, Instant now);

  /**
   * Moves a claimed row to sending and sets its lease end. Call right before the request goes out.
   *
   * @throws FencedOffException when the row is not claimed with {@code fencingToken}
   */
  OutboxRecord markSending(CommandId id, long fencingToken, Instant leaseExpiresAt, Instant now);

  /**
   * Moves several claimed rows to sending, each under its own claim's fencing token, in one
   * transaction that is durable when this returns. A row whose claim was lost is left as it is and
   * missing from the result; it never fails the others.
   *
   * <p>The default implementation runs {@link #markSending(Object, List, Instant, Instant)} in
   * {@link #inTransaction}.
   *
   * @param claimed rows as returned by {@link #claim}
   * @return the rows now sending, in the order given
   */
  default List<OutboxRecord> markSending(List<OutboxRecord> claimed, Instant leaseExpiresAt,
      Instant now) {
    if (claimed.isEmpty()) {
      return List.of();
    }
    return inTransaction(tx -> markSending(tx, claimed, leaseExpiresAt, now));
  }

  /**
   * Like {@link #markSending(List, Instant, Instant)} inside the caller's open transaction, so
   * that the replayer can record earlier answers and start the next sends in one commit. The rows
   * are sending only once the caller commits; a lost claim never fails the transaction. Never
   * commits or closes it.
   *
   * @param claimed rows as returned by {@link #claim}
   * @return the rows sending if the transaction commits, in the order given
   */
  List<OutboxRecord> markSending(T transaction, List<OutboxRecord> claimed,
      Instant leaseExpiresAt, Instant now);

  /**
   * Inside the caller's open transaction: claims the command that comes right after {@code
   * sending} in its entity's accept order, so that the replayer can mark it sending while {@code
   * sending}'s request is in flight and send it the moment that one ends, without a commit in
   * between. Only a command never attempted ({@code queued}), due at {@code now} and accepted
   * under session version {@code sessionVersion} or later is taken, and only while {@code
   * sending} is still sending under its fencing token. The claim is like {@link #claim}'s (status
   * claimed, a new fencing token, lease to {@code now + lease}, audited) and holds only once the
   * caller commits. Never commits or closes the transaction.
   *
   * <p>The default takes nothing: a store without it sends an entity's commands a commit apart.
   *
   * @param sending a row this replayer holds in status sending
   * @return the claimed row, or empty when there is none to take
   */
  default Optional<OutboxRecord> claimNextOfEntity(T transaction, String owner, Duration lease,
      OutboxRecord sending, long sessionVersion, Instant now) {
    return Optional.empty();
  }

  /**
   * Records an outcome for a row held with {@code fencingToken} in status {@code expected}
   * (claimed or sending) and ends the claim.
   *
   * @throws IllegalStateException when {@link StateMachine} forbids {@code expected -> outcome}
   * @throws FencedOffException when the row's status or token is no longer the expected one
   */
  OutboxRecord complete(CommandId id, long fencingToken, Status expected, Outcome outcome,
      Instant now);

  /**
   * Like {@link #complete(CommandId, long, Status, Outcome, Instant)} inside the caller's open
   * transaction, so that a local state change and the row's new status commit together.
   */
  OutboxRecord complete(T transaction, CommandId id, long fencingToken, Status expected,
      Outcome outcome, Instant now);

  /**
   * Like {@link #complete(Object, CommandId, long, Status, Outcome, Instant)} for {@code held}:
   * the row exactly as this store's claim or mark returned it to the caller, who still holds it in
   * status {@code expected} under {@code held}'s fencing token. While a claim holds, only a change
   * of status or token writes the row's columns, so a store may build the row it returns from
   * {@code held} and {@code outcome} instead of reading it back; it returns the same row either
   * way. The default calls the id-based method.
   *
   * @throws IllegalStateException when {@link StateMachine} forbids {@code expected -> outcome}
   * @throws FencedOffException when the row's status or token is no longer the expected one
   */
  default OutboxRecord complete(T transaction, OutboxRecord held, Status expected,
      Outcome outcome, Instant now) {
    return complete(transaction, held.commandId(), held.fencingToken(), expected, outcome, now);
  }

  /**
   * Gives back a claimed, unsent row: it returns to the status it was claimed from (queued,
   * retryable_failed or unknown), due at {@code nextAttemptAt}, with no attempt counted.
   *
   * @throws FencedOffException when the row is not claimed with {@code fencingToken}
   */
  OutboxRecord release(CommandId id, long fencingToken, Instant nextAttemptAt, Instant now);

  /**
   * Ends every lease that ran out at or before {@code now}: a sending row becomes unknown (the
   * request may have reached the server; counted as an attempt, reason
   * {@link Reason#LEASE_EXPIRED_WHILE_SENDING}); a claimed row goes back to the status it was
   * claimed from ({@link Reason#LEASE_EXPIRED_WHILE_CLAIMED}, not an attempt). Never makes a
   * sending row queued. Reads only rows that hold a lease. Durable when it returns.
   *
   * @return each row changed, as it is now, with the change as the audit trail records it
   */
  List<OutboxStore.RecoveredLease> recoverExpiredLeases(Instant now);

  /**
   * Runs {@code work} in one new transaction and commits it durably; rolls it back when
   * {@code work} throws. Runtime exceptions pass through unchanged; checked ones are wrapped in
   * {@link OutboxException}.
   */
  <R> R inTransaction(OutboxStore.TransactionWork<T, R> work);

  /**
   * The earliest time a row can next be claimed: a waiting entity head's next attempt or a held
   * row's lease end. Rows queued behind an earlier open row of their entity do not count: they
   * become claimable only when that row ends.
   */
  Optional<Instant> nextDueAt();
}
