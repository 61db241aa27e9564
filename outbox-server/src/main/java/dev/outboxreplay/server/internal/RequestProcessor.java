package dev.outboxreplay.server.internal;

import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
import java.sql.SQLException;

/**
 * Processes one checked request (route found, tenant and key valid, body read) with its
 * operation's handler. {@link IdempotencyProtocol} is the real one; {@link FaultInjection}
 * decorates it.
 */
@FunctionalInterface
public interface RequestProcessor {
  Answer process(ServerRequest request, OperationHandler handler) throws SQLException;
}
