package io.github.resilienthttp.opentelemetry;

import io.github.resilienthttp.OperationListener;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.Interceptor;

/**
 * OpenTelemetry tracing for Resilient HTTP operations. Thread-safe; make one per
 * {@link io.github.resilienthttp.ResilientHttpClient} (or share one between clients).
 *
 * <p>It has two halves that must both be installed: the {@link #listener()}, registered with
 * {@code ResilientHttpClient.Builder.addListener}, makes the spans; the {@link #interceptor()}, added
 * with {@code OkHttpClient.Builder.addInterceptor} to the client you wrap, completes each attempt's
 * span with its URL and port and propagates its trace context in the attempt's request headers.
 * <pre>{@code
 * ResilientHttpTracing tracing = ResilientHttpTracing.create(openTelemetry);
 * OkHttpClient okHttp = new OkHttpClient.Builder().addInterceptor(tracing.interceptor()).build();
 * ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).addListener(tracing.listener()).build();
 * }</pre>
 *
 * <p>What an operation records:
 * <ul>
 *   <li>one {@code INTERNAL} span per operation, named {@code "resilient-http <METHOD>"}, child of the
 *       context current when the operation started, with events {@code resilient_http.retry_scheduled}
 *       (the wait before a retry: {@code resilient_http.retry.delay_ms}), and the rejections
 *       ({@code resilient_http.retry_budget_refused}, {@code resilient_http.circuit_breaker_rejected},
 *       {@code resilient_http.bulkhead_rejected}, and the adaptive overload control's
 *       {@code resilient_http.throttled} and {@code resilient_http.limited}, each with
 *       {@code resilient_http.attempt}), the wait for a rate-limit reset
 *       ({@code resilient_http.paced}, with {@code resilient_http.paced.wait_ms}) and server answers
 *       ({@code resilient_http.replay_detected}, {@code resilient_http.in_progress});
 *   <li>under it, one {@code CLIENT} span per attempt following the OpenTelemetry HTTP client
 *       semantic conventions ({@code http.request.method}, {@code server.address},
 *       {@code server.port}, {@code url.full}, {@code http.response.status_code}, {@code error.type}),
 *       with {@code http.request.resend_count} counted across the operation's attempts (absent on
 *       the first, 1 on the second, ...), and the SDK's classification as
 *       {@code resilient_http.decision} and {@code resilient_http.reason}.
 * </ul>
 *
 * <p>Hedged operations ({@code HedgingPolicy}): each copy is a {@code CLIENT} span of its own with
 * {@code resilient_http.attempt.kind} {@code hedge}, running beside the first; a copy that lost is
 * ended with {@code error.type} {@code cancelled}, and the operation span carries
 * {@code resilient_http.winning_attempt}.
 *
 * <p>No secret is recorded: never the whole idempotency key (only its first 8 characters, as
 * {@code resilient_http.idempotency_key.prefix} on the operation span), no header, no body, no
 * exception message; {@code url.full} has no user info and every query value replaced by
 * {@code REDACTED}.
 *
 * <p>Beside OpenTelemetry's own OkHttp instrumentation (the Java agent's, or an interceptor of
 * {@code opentelemetry-okhttp-3.0}), every attempt would get two {@code CLIENT} spans, and the other
 * one's resend count restarts at each attempt (each attempt is its own OkHttp call). Either turn that
 * instrumentation off for OkHttp (agent: {@code -Dotel.instrumentation.okhttp.enabled=false}), or
 * keep it and build this with {@link Builder#attemptSpans(boolean) attemptSpans(false)}: then only
 * the operation span is made here (attempt outcomes become its {@code resilient_http.attempt_ended}
 * events), and the interceptor makes it the current context while the rest of the chain runs, so
 * that an instrumentation interceptor added after it parents its spans there.
 *
 * <p>Two operations running at the same time with the same caller-chosen idempotency key: the second
 * is not traced (the interceptor finds an operation by its key).
 */
public final class ResilientHttpTracing {
  /** The instrumentation scope name of the tracer: {@value}. */
  public static final String INSTRUMENTATION_NAME = "io.github.resilienthttp";

  private final TracingListener listener;
  private final TracingInterceptor interceptor;

  private ResilientHttpTracing(Builder b) {
    Tracer tracer = b.openTelemetry.getTracer(INSTRUMENTATION_NAME);
    ConcurrentHashMap<String, OperationTrace> traces = new ConcurrentHashMap<>();
    this.listener = new TracingListener(tracer, traces, b.attemptSpans);
    this.interceptor = new TracingInterceptor(traces,
        b.openTelemetry.getPropagators().getTextMapPropagator(), b.attemptSpans);
  }

  /**
   * Tracing with the defaults: attempt spans on.
   *
   * @param openTelemetry where the tracer and the propagator come from
   * @return the tracing
   * @throws NullPointerException when {@code openTelemetry} is null
   */
  public static ResilientHttpTracing create(OpenTelemetry openTelemetry) {
    return builder(openTelemetry).build();
  }

  /**
   * Starts building tracing.
   *
   * @param openTelemetry where the tracer and the propagator come from
   * @return a builder
   * @throws NullPointerException when {@code openTelemetry} is null
   */
  public static Builder builder(OpenTelemetry openTelemetry) {
    return new Builder(openTelemetry);
  }

  /**
   * The listener that makes the spans: register it with
   * {@code ResilientHttpClient.Builder.addListener}.
   *
   * @return the listener, the same on every call
   */
  public OperationListener listener() {
    return listener;
  }

  /**
   * The interceptor that completes each attempt's span and propagates its context: add it with
   * {@code OkHttpClient.Builder.addInterceptor} to the client you wrap (an application interceptor,
   * not a network one). Calls that are not the SDK's pass through untouched.
   *
   * @return the interceptor, the same on every call
   */
  public Interceptor interceptor() {
    return interceptor;
  }

  /** Builds {@link ResilientHttpTracing}. Not thread-safe; {@link #build()} may be called again. */
  public static final class Builder {
    private final OpenTelemetry openTelemetry;
    private boolean attemptSpans = true;

    private Builder(OpenTelemetry openTelemetry) {
      this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
    }

    /**
     * Whether to make one {@code CLIENT} span per attempt (default {@code true}). Turn off when
     * OpenTelemetry's own OkHttp instrumentation makes them (see the class comment).
     *
     * @param attemptSpans whether to make attempt spans
     * @return this builder
     */
    public Builder attemptSpans(boolean attemptSpans) {
      this.attemptSpans = attemptSpans;
      return this;
    }

    /**
     * Builds the tracing.
     *
     * @return the tracing
     */
    public ResilientHttpTracing build() {
      return new ResilientHttpTracing(this);
    }
  }
}
