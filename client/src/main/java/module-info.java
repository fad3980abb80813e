/**
 * Resilient HTTP: safe retries for OkHttp. One idempotency key per operation, reused on every
 * attempt; classified outcomes; full-jitter backoff that honours {@code Retry-After}; one total
 * deadline; a retry budget; a circuit breaker and a bulkhead.
 *
 * <p>Only {@code io.github.resilienthttp} (and the optional {@code json} and {@code micrometer}
 * helpers) are API. The {@code io.github.resilienthttp.internal} packages are the implementation:
 * not exported, and free to change in any release.
 */
module io.github.resilienthttp {
  requires transitive okhttp3;
  requires transitive io.github.resilience4j.circuitbreaker;
  requires transitive io.github.resilience4j.bulkhead;
  requires io.github.resilience4j.core;
  requires okio;
  requires kotlin.stdlib;
  requires org.slf4j;
  requires static com.fasterxml.jackson.databind;
  requires static micrometer.core;

  exports io.github.resilienthttp;
  exports io.github.resilienthttp.json;
  exports io.github.resilienthttp.micrometer;
}
