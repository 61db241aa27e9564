/**
 * <b>API.</b> The reference idempotent receiver ({@link dev.outboxreplay.server.IdempotentServer})
 * for tests, demos and embedding: operation handlers, tenant resolution and fault injection.
 */
package dev.outboxreplay.server;
