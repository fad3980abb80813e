/**
 * Resilient HTTP: safe retries for OkHttp. One idempotency key per operation, reused on every
 * attempt; classified outcomes; full-jitter backoff that honours {@code Retry-After}; one total
 * deadline; a retry budget; a circuit breaker and a bulkhead.
 *
 * <p>Only {@code io.github.resilienthttp} is API. The {@code io.github.resilienthttp.internal}
 * packages are the implementation: not exported, and free to change in any release. JSON, Micrometer
 * and OpenTelemetry are separate artifacts and modules ({@code io.github.resilienthttp.json},
 * {@code io.github.resilienthttp.micrometer}, {@code io.github.resilienthttp.opentelemetry}).
 */
module io.github.resilienthttp {
  requires transitive okhttp3;
  requires transitive io.github.resilience4j.circuitbreaker;
  requires transitive io.github.resilience4j.bulkhead;
  requires io.github.resilience4j.core;
  requires okio;
  requires kotlin.stdlib;
  requires org.slf4j;
  // Optional (ConcurrencyLimitPolicy): Netflix's jar has no descriptor, so this is its automatic
  // module name, derived from the file name; only internal.guard.NetflixLimiter reads it.
  requires static concurrency.limits.core;

  exports io.github.resilienthttp;
}
