package io.github.resilienthttp.opentelemetry;

import static io.github.resilienthttp.opentelemetry.TraceAttributes.ATTEMPT;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.ATTEMPTS;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.ATTEMPT_KIND;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.BREAKER;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.DECISION;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.ERROR_TYPE;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.FROM_RETRY_AFTER;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.HTTP_REQUEST_METHOD;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.HTTP_REQUEST_RESEND_COUNT;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.HTTP_RESPONSE_STATUS_CODE;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.IDEMPOTENT;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.KEY_PREFIX;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.KEY_SENT;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.NEXT_ATTEMPT;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.PACED_WAIT_MS;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.OUTCOME;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.REASON;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.RETRY_DELAY_MS;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.SERVER_ADDRESS;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.WINNING_ATTEMPT;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentMap;

/** Makes the operation and attempt spans from the SDK's listener events. */
final class TracingListener implements OperationListener {
  private final Tracer tracer;
  private final ConcurrentMap<String, OperationTrace> traces;
  private final boolean attemptSpans;

  TracingListener(Tracer tracer, ConcurrentMap<String, OperationTrace> traces, boolean attemptSpans) {
    this.tracer = tracer;
    this.traces = traces;
    this.attemptSpans = attemptSpans;
  }

  @Override
  public void operationStarted(OperationInfo operation) {
    Context parent = Context.current();
    Span span = tracer.spanBuilder("resilient-http " + operation.method())
        .setParent(parent)
        .setSpanKind(SpanKind.INTERNAL)
        .setAttribute(HTTP_REQUEST_METHOD, operation.method())
        .setAttribute(SERVER_ADDRESS, operation.host())
        .setAttribute(IDEMPOTENT, operation.idempotent())
        .setAttribute(KEY_SENT, operation.idempotencyKeySent())
        .setAttribute(KEY_PREFIX, operation.shortKey())
        .startSpan();
    OperationTrace trace = new OperationTrace(operation, span, parent.with(span));
    OperationTrace running = traces.putIfAbsent(operation.idempotencyKey(), trace);
    if (running != null) {
      // Another running operation has this key: trace only the first (see ResilientHttpTracing).
      running.contended = true;
      span.end();
    }
  }

  @Override
  public void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
    OperationTrace trace = find(operation);
    if (trace == null) {
      return;
    }
    if (kind != AttemptKind.HEDGE) {
      // A first attempt or a retry follows attempts that ended; a hedge runs beside them.
      endOpenAttempts(trace, null, 0);
    }
    if (!attemptSpans) {
      return;
    }
    SpanBuilder b = tracer.spanBuilder(operation.method())
        .setParent(trace.operationContext)
        .setSpanKind(SpanKind.CLIENT)
        .setAttribute(HTTP_REQUEST_METHOD, operation.method())
        .setAttribute(SERVER_ADDRESS, operation.host())
        .setAttribute(ATTEMPT, (long) attempt)
        .setAttribute(ATTEMPT_KIND, kind.name().toLowerCase(Locale.ROOT));
    if (attempt > 1) {
      b.setAttribute(HTTP_REQUEST_RESEND_COUNT, (long) attempt - 1);
    }
    Span span = b.startSpan();
    trace.attempts.put(attempt, new OperationTrace.AttemptSpan(span, trace.operationContext.with(span)));
  }

  @Override
  public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
      IOException failure, Decision decision, Duration duration) {
    OperationTrace trace = find(operation);
    if (trace == null) {
      return;
    }
    String errorType = errorType(statusCode, failure);
    if (!attemptSpans) {
      AttributesBuilder a = Attributes.builder().put(ATTEMPT, (long) attempt)
          .put(DECISION, decisionName(decision)).put(REASON, decision.reason());
      if (statusCode >= 0) {
        a.put(HTTP_RESPONSE_STATUS_CODE, (long) statusCode);
      }
      if (errorType != null) {
        a.put(ERROR_TYPE, errorType);
      }
      trace.operationSpan.addEvent("resilient_http.attempt_ended", a.build());
      return;
    }
    OperationTrace.AttemptSpan open = trace.attempts.remove(attempt);
    if (open == null) {
      return;
    }
    Span span = open.span();
    if (statusCode >= 0) {
      span.setAttribute(HTTP_RESPONSE_STATUS_CODE, (long) statusCode);
    }
    span.setAttribute(DECISION, decisionName(decision));
    span.setAttribute(REASON, decision.reason());
    endAttempt(span, errorType);
  }

  @Override
  public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
      boolean fromRetryAfter) {
    event(operation, "resilient_http.retry_scheduled", Attributes.of(
        NEXT_ATTEMPT, (long) nextAttempt, RETRY_DELAY_MS, delay.toMillis(),
        FROM_RETRY_AFTER, fromRetryAfter));
  }

  @Override
  public void retryBudgetRefused(OperationInfo operation, int attempt) {
    event(operation, "resilient_http.retry_budget_refused", Attributes.of(ATTEMPT, (long) attempt));
  }

  @Override
  public void circuitBreakerRejected(OperationInfo operation, String breakerName, int attempt) {
    event(operation, "resilient_http.circuit_breaker_rejected",
        Attributes.of(ATTEMPT, (long) attempt, BREAKER, breakerName));
  }

  @Override
  public void bulkheadRejected(OperationInfo operation, int attempt) {
    event(operation, "resilient_http.bulkhead_rejected", Attributes.of(ATTEMPT, (long) attempt));
  }

  @Override
  public void throttled(OperationInfo operation, int attempt) {
    event(operation, "resilient_http.throttled", Attributes.of(ATTEMPT, (long) attempt));
  }

  @Override
  public void limited(OperationInfo operation, int attempt) {
    event(operation, "resilient_http.limited", Attributes.of(ATTEMPT, (long) attempt));
  }

  @Override
  public void paced(OperationInfo operation, int attempt, java.time.Duration wait) {
    event(operation, "resilient_http.paced", Attributes.of(ATTEMPT, (long) attempt,
        PACED_WAIT_MS, wait.toMillis()));
  }

  @Override
  public void replayDetected(OperationInfo operation, int attempt) {
    event(operation, "resilient_http.replay_detected", Attributes.of(ATTEMPT, (long) attempt));
  }

  @Override
  public void inProgress(OperationInfo operation, int attempt) {
    event(operation, "resilient_http.in_progress", Attributes.of(ATTEMPT, (long) attempt));
  }

  @Override
  public void operationEnded(OperationInfo operation, OperationResult result) {
    OperationTrace trace = find(operation);
    if (trace == null) {
      return;
    }
    traces.remove(operation.idempotencyKey(), trace);
    String failureType = result.failure().map(f -> f.getClass().getName()).orElse(null);
    endOpenAttempts(trace, failureType, result.winningAttempt());
    Span span = trace.operationSpan;
    if (result.winningAttempt() > 0) {
      span.setAttribute(WINNING_ATTEMPT, (long) result.winningAttempt());
    }
    span.setAttribute(ATTEMPTS, (long) result.attempts());
    span.setAttribute(OUTCOME, result.outcome().name().toLowerCase(Locale.ROOT));
    span.setAttribute(REASON, result.reason());
    if (result.statusCode() > 0) {
      span.setAttribute(HTTP_RESPONSE_STATUS_CODE, (long) result.statusCode());
    }
    if (failureType != null) {
      span.setAttribute(ERROR_TYPE, failureType);
      span.setStatus(StatusCode.ERROR, result.failure().get().getClass().getSimpleName());
    } else if (result.statusCode() >= 400) {
      span.setAttribute(ERROR_TYPE, Integer.toString(result.statusCode()));
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  /** The trace of {@code operation}: the one registered for its key by this very operation. */
  private OperationTrace find(OperationInfo operation) {
    OperationTrace trace = traces.get(operation.idempotencyKey());
    if (trace == null || trace.info == operation) {
      return trace;
    }
    return !trace.contended && sameOperation(trace.info, operation) ? trace : null;
  }

  private static boolean sameOperation(OperationInfo a, OperationInfo b) {
    // The SDK may describe one operation with equal, not identical, values (made on first use).
    return a.method().equals(b.method()) && a.host().equals(b.host())
        && a.idempotent() == b.idempotent() && a.idempotencyKeySent() == b.idempotencyKeySent();
  }

  private void event(OperationInfo operation, String name, Attributes attributes) {
    OperationTrace trace = find(operation);
    if (trace != null) {
      trace.operationSpan.addEvent(name, attributes);
    }
  }

  /**
   * Ends the attempt spans that no {@code attemptEnded} closed: cancelled, cut by the deadline,
   * interrupted, or a hedge's copy that lost to {@code winner} (then {@code error.type} says
   * {@code cancelled}: it was stopped, it did not fail).
   */
  private static void endOpenAttempts(OperationTrace trace, String errorType, int winner) {
    for (Integer attempt : trace.attempts.keySet()) {
      OperationTrace.AttemptSpan open = trace.attempts.remove(attempt);
      if (open != null) {
        boolean lostToAHedge = winner > 0 && attempt != winner;
        endAttempt(open.span(), lostToAHedge ? "cancelled" : errorType != null ? errorType : "_OTHER");
      }
    }
  }

  private static void endAttempt(Span span, String errorType) {
    if (errorType != null) {
      span.setAttribute(ERROR_TYPE, errorType);
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  /**
   * The semantic conventions' {@code error.type}: the status code for 4xx and 5xx, the exception's
   * class name for a failure, none for success.
   */
  private static String errorType(int statusCode, IOException failure) {
    if (failure != null) {
      return failure.getClass().getName();
    }
    return statusCode >= 400 ? Integer.toString(statusCode) : null;
  }

  private static String decisionName(Decision decision) {
    return decision.kind().name().toLowerCase(Locale.ROOT);
  }
}
