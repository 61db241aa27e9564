/**
 * <b>Internal.</b> The replay engine behind {@link dev.outboxreplay.Replayer}: one pass, the
 * outcome policy, the recorder and the pause gate. Not API.
 */
package dev.outboxreplay.internal.replay;
