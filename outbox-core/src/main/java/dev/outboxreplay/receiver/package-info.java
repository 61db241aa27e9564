/**
 * <b>SPI.</b> The receiving side's idempotency records, per the IETF Idempotency-Key draft:
 * {@link dev.outboxreplay.receiver.IdempotencyRecordStore} and the values it deals in. One
 * implementation serves one receiver node or many nodes on one database; the contract test
 * {@code IdempotencyRecordStoreContract} in {@code outbox-testkit} is what "correct" means.
 */
package dev.outboxreplay.receiver;
