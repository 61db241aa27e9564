package dev.outboxreplay;

import java.time.Instant;

/**
 * A privacy-safe description of an inbox row that needs attention (an integrity failure, or a
 * message id redelivered with other bytes): no payload, no plaintext, and the message id only as
 * a hash.
 *
 * @param scope message scope
 * @param messageIdHash first 16 hex digits of SHA-256 of the message id
 * @param at when: the consumption for an integrity failure, the latest mismatched delivery for a
 *     mismatch
 * @param reason why it is an integrity failure
 */
public record InboxDiagnostic(String scope, String messageIdHash, Instant at,
    String reason) {}
