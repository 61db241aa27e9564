/**
 * <b>API and SPI.</b> The outbox ({@link dev.outboxreplay.Outbox}, {@link
 * dev.outboxreplay.Replayer}) and inbox ({@link dev.outboxreplay.Inbox}) engines, their value
 * types, and the interfaces an application or a store implements: {@link
 * dev.outboxreplay.OutboxStore}, {@link dev.outboxreplay.InboxStore}, {@link
 * dev.outboxreplay.Transport}, {@link dev.outboxreplay.ResponseApplier}, {@link
 * dev.outboxreplay.SessionRuntime}, {@link dev.outboxreplay.ConnectivityMonitor}. Stable within a
 * major version.
 */
package dev.outboxreplay;
