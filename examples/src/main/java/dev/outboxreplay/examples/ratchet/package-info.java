/** <b>Examples.</b> A decryption ratchet fed by the inbox. */
package dev.outboxreplay.examples.ratchet;
