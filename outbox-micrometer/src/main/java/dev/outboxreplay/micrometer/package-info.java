/**
 * <b>API.</b> Micrometer binders for the outbox ({@link dev.outboxreplay.micrometer.OutboxMetrics})
 * and the inbox ({@link dev.outboxreplay.micrometer.InboxMetrics}). Optional: only applications
 * that use Micrometer need this module.
 */
package dev.outboxreplay.micrometer;
