/**
 * <b>Internal.</b> SQL, schema steps, error translation, file checks and H2 workarounds of the H2
 * stores. Not API: may change in any release.
 */
package dev.outboxreplay.h2.internal;
