package io.github.resilienthttp.internal.engine;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.random.RandomGenerator;
import okhttp3.OkHttpClient;

/**
 * What a client's builder was given, immutable: the one record between
 * {@code ResilientHttpClient.Builder} and {@link ClientRuntime}, which builds its runtime state from
 * it, and from which {@code newBuilder()} reads the settings back. Nothing here is kept a second
 * time in the client's façade. Not API.
 *
 * @param wrapped the wrapped OkHttp client
 * @param retryPolicy the retry policy
 * @param classifier the response classifier
 * @param idempotencyKeyPolicy the key policy
 * @param timeSource the clock and sleeper
 * @param random the jitter's randomness
 * @param retryBudget the retry budget (runtime state, shared by derived clients)
 * @param circuitBreakerRegistry the user's registry, or {@code null}
 * @param circuitBreaker the user's single breaker, or {@code null}
 * @param circuitBreakerDisabled whether no breaker applies
 * @param sharedBreakers the breakers of the client this one was derived from, or {@code null}
 * @param bulkheadConfig the bulkhead's configuration, or {@code null} for none
 * @param bulkheadName the bulkhead's name
 * @param listeners the listeners, in order
 * @param replayHeader the header a server sets on a replayed answer
 * @param scheduler the user's scheduler, or {@code null} for the SDK's
 * @param hedgingPolicy the hedging policy, or {@code null} for none
 * @param resumeTokenSigner the keys that sign and verify this client's resume tokens
 * @param overload the adaptive overload options (throttling, concurrency limit, pacing)
 */
public record ClientSettings(OkHttpClient wrapped, RetryPolicy retryPolicy,
    ResponseClassifier classifier, IdempotencyKeyPolicy idempotencyKeyPolicy, TimeSource timeSource,
    RandomGenerator random, RetryBudget retryBudget, CircuitBreakerRegistry circuitBreakerRegistry,
    CircuitBreaker circuitBreaker, boolean circuitBreakerDisabled,
    TargetCircuitBreakers sharedBreakers, BulkheadConfig bulkheadConfig, String bulkheadName,
    List<OperationListener> listeners, String replayHeader, ScheduledExecutorService scheduler,
    HedgingPolicy hedgingPolicy, io.github.resilienthttp.internal.async.ResumeTokenSigner resumeTokenSigner,
    io.github.resilienthttp.internal.guard.OverloadSettings overload) {

  /** Copies the listener list. */
  public ClientSettings {
    listeners = List.copyOf(listeners);
  }
}
