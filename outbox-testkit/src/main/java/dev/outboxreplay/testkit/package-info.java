/**
 * <b>Test support.</b> The store contract every {@link dev.outboxreplay.OutboxStore} must pass,
 * a manual clock, seeds and child-JVM helpers, for tests of this project and of other store
 * implementations.
 */
package dev.outboxreplay.testkit;
