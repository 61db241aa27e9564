package dev.outboxreplay.server;

import java.sql.Connection;

/**
 * The business effect of one operation. It runs inside the same database transaction as the
 * request's idempotency record: the effect and the stored answer commit together, or neither
 * does. It is called at most once per (tenant, key) whose effect commits.
 */
@FunctionalInterface
public interface OperationHandler {
  /**
   * Applies {@code request} using {@code transaction} (never commit, roll back or close it).
   * Throwing rolls the effect back and answers 500; the key may then be retried.
   */
  HandlerResponse handle(Connection transaction, ServerRequest request) throws Exception;
}
