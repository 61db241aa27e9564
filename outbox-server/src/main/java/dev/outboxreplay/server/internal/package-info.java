/**
 * <b>Internal.</b> The receiver's idempotency records and HTTP helpers. Not API.
 */
package dev.outboxreplay.server.internal;
