/** <b>Benchmarks.</b> Commands that print measured ratios; not a library. */
package dev.outboxreplay.benchmarks;
