package dev.outboxreplay;

import java.time.Instant;

/**
 * A privacy-safe description of an inbox row in {@link InboxEntry.State#INTEGRITY_FAILURE}: no
 * payload, no plaintext, and the message id only as a hash.
 *
 * @param scope message scope
 * @param messageIdHash first 16 hex digits of SHA-256 of the message id
 * @param consumedAt when it was consumed
 * @param reason why it is an integrity failure
 */
public record InboxDiagnostic(String scope, String messageIdHash, Instant consumedAt,
    String reason) {}
