package io.github.resilienthttp.opentelemetry;

import io.github.resilienthttp.OperationInfo;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The spans of one running operation: written by the listener (on the thread running the operation),
 * read by the interceptor (on OkHttp's thread for the attempt's call). A hedged operation has
 * several attempts in flight at once, so each open attempt has its own slot, by number.
 */
final class OperationTrace {
  final OperationInfo info;
  final Span operationSpan;
  final Context operationContext;
  /** The open attempt spans, by attempt number (empty when attempt spans are off). */
  final Map<Integer, AttemptSpan> attempts = new ConcurrentHashMap<>(4);

  /** An attempt's span and the context that carries it. */
  record AttemptSpan(Span span, Context context) {}
  /** Another operation with the same key started while this one ran: match by identity only. */
  volatile boolean contended;

  OperationTrace(OperationInfo info, Span operationSpan, Context operationContext) {
    this.info = info;
    this.operationSpan = operationSpan;
    this.operationContext = operationContext;
  }
}
