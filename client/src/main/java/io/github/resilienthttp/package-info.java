/**
 * Safe retries for OkHttp. {@link io.github.resilienthttp.ResilientHttpClient} wraps an existing
 * {@link okhttp3.OkHttpClient} and runs each request as an {@link io.github.resilienthttp.Operation}:
 * one idempotency key per operation, reused on every attempt; every attempt's outcome classified by a
 * {@link io.github.resilienthttp.ResponseClassifier} as safe to retry, outcome unknown or permanent;
 * full-jitter backoff that honours {@code Retry-After}; one total deadline; and a
 * {@link io.github.resilienthttp.RetryBudget}, circuit breaker and bulkhead so that an outage cannot
 * multiply load.
 *
 * <p>Every exception the SDK throws is an {@link java.io.IOException} that implements
 * {@link io.github.resilienthttp.OperationFailure}. Events are reported to
 * {@link io.github.resilienthttp.OperationListener}s.
 */
package io.github.resilienthttp;
