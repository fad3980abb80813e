package io.github.resilienthttp.opentelemetry;

import static io.github.resilienthttp.opentelemetry.TraceAttributes.SERVER_ADDRESS;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.SERVER_PORT;
import static io.github.resilienthttp.opentelemetry.TraceAttributes.URL_FULL;

import io.github.resilienthttp.OperationCalls;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * On the wrapped client: finds the attempt's span through {@link OperationCalls}, completes it with
 * what only the request knows (URL, port), injects its context into the request's headers, and makes
 * it current while the rest of the chain runs.
 */
final class TracingInterceptor implements Interceptor {
  private static final TextMapSetter<Request.Builder> SETTER = Request.Builder::header;

  private final Map<String, OperationTrace> traces;
  private final TextMapPropagator propagator;
  private final boolean attemptSpans;

  TracingInterceptor(Map<String, OperationTrace> traces, TextMapPropagator propagator,
      boolean attemptSpans) {
    this.traces = traces;
    this.propagator = propagator;
    this.attemptSpans = attemptSpans;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    OperationTrace trace = traceOf(chain);
    if (trace == null) {
      return chain.proceed(request);
    }
    Context context = trace.operationContext;
    if (attemptSpans) {
      OptionalInt attempt = OperationCalls.attempt(chain.call());
      OperationTrace.AttemptSpan open =
          attempt.isEmpty() ? null : trace.attempts.get(attempt.getAsInt());
      if (open == null) {
        return chain.proceed(request);
      }
      Span span = open.span();
      Context attemptContext = open.context();
      HttpUrl url = request.url();
      span.setAttribute(URL_FULL, redact(url));
      span.setAttribute(SERVER_ADDRESS, url.host());
      span.setAttribute(SERVER_PORT, (long) url.port());
      Request.Builder withContext = request.newBuilder();
      propagator.inject(attemptContext, withContext, SETTER);
      request = withContext.build();
      context = attemptContext;
    }
    try (Scope ignored = context.makeCurrent()) {
      return chain.proceed(request);
    }
  }

  private OperationTrace traceOf(Chain chain) {
    Optional<String> key = OperationCalls.idempotencyKey(chain.call());
    return key.isPresent() ? traces.get(key.get()) : null;
  }

  /** {@code url.full} without user info, every query value {@code REDACTED}, no fragment. */
  static String redact(HttpUrl url) {
    HttpUrl.Builder b = url.newBuilder().username("").password("").fragment(null).query(null);
    for (int i = 0; i < url.querySize(); i++) {
      b.addQueryParameter(url.queryParameterName(i),
          url.queryParameterValue(i) == null ? null : "REDACTED");
    }
    return b.build().toString();
  }
}
