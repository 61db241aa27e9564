/** <b>Examples.</b> Runnable examples of the library's use; not a library. */
package dev.outboxreplay.examples;
