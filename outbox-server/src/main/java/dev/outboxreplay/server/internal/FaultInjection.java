package dev.outboxreplay.server.internal;

import dev.outboxreplay.server.FaultPlan;
import dev.outboxreplay.server.HandlerResponse;
import dev.outboxreplay.server.OperationHandler;
import dev.outboxreplay.server.ServerRequest;
import java.sql.SQLException;
import java.util.Map;

/**
 * Wraps the real {@link RequestProcessor} with a {@link FaultPlan}: decides each request's fault
 * once, answers a planned failure without processing, runs the before-commit hook inside the
 * business transaction after the handler, and the after-commit hook and the dropped answer only
 * when this request's effect committed.
 */
public final class FaultInjection implements RequestProcessor {
  private final RequestProcessor real;
  private final FaultPlan plan;

  public FaultInjection(RequestProcessor real, FaultPlan plan) {
    this.real = real;
    this.plan = plan;
  }

  @Override
  public Answer process(ServerRequest request, OperationHandler handler) throws SQLException {
    FaultPlan.Fault fault = plan.onRequest(request);
    if (fault.failStatus() != 0) {
      Map<String, String> headers = fault.retryAfter() == null ? Map.of()
          : Map.of("Retry-After", Long.toString(fault.retryAfter().toSeconds()));
      return Answer.problem(fault.failStatus(), "about:blank", "Injected failure",
          "fault plan answered " + fault.failStatus(), headers);
    }
    OperationHandler effective = fault.beforeCommit() == null ? handler
        : (transaction, r) -> {
          HandlerResponse response = handler.handle(transaction, r);
          fault.beforeCommit().run();
          return response;
        };
    Answer answer = real.process(request, effective);
    if (!answer.committedHere()) {
      return answer;
    }
    if (fault.afterCommit() != null) {
      fault.afterCommit().run();
    }
    return fault.dropResponse() ? Answer.dropped() : answer;
  }
}
