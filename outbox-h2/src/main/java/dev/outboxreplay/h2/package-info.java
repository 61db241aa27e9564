/**
 * <b>API.</b> The H2 file database ({@link dev.outboxreplay.h2.H2Database}) and the outbox and
 * inbox stores on it ({@link dev.outboxreplay.h2.H2OutboxStore}, {@link
 * dev.outboxreplay.h2.H2InboxStore}).
 */
package dev.outboxreplay.h2;
