/** <b>Examples.</b> The {@code outbox} command-line tool and the demo. */
package dev.outboxreplay.examples.cli;
