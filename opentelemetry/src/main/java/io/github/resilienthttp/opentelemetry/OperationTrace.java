package io.github.resilienthttp.opentelemetry;

import io.github.resilienthttp.OperationInfo;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;

/**
 * The spans of one running operation: written by the listener (on the thread running the operation),
 * read by the interceptor (on OkHttp's thread for the attempt's call). Attempts of one operation
 * never overlap, so one slot for the attempt in flight is enough.
 */
final class OperationTrace {
  final OperationInfo info;
  final Span operationSpan;
  final Context operationContext;
  /** The attempt in flight and its span; {@code null} span when attempt spans are off or none runs. */
  volatile int attempt;
  volatile Span attemptSpan;
  volatile Context attemptContext;
  /** Another operation with the same key started while this one ran: match by identity only. */
  volatile boolean contended;

  OperationTrace(OperationInfo info, Span operationSpan, Context operationContext) {
    this.info = info;
    this.operationSpan = operationSpan;
    this.operationContext = operationContext;
  }
}
