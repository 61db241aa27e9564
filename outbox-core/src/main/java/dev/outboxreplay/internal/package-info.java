/**
 * <b>Internal.</b> Helpers of the core module (canonical JSON, argument checks, the replay
 * engine). Not API: may change in any release; other modules of this project use it, applications
 * must not.
 */
package dev.outboxreplay.internal;
