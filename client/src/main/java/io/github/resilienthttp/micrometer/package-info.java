/**
 * Micrometer metrics for operations: {@link io.github.resilienthttp.micrometer.MicrometerOperationMetrics}
 * is an {@link io.github.resilienthttp.OperationListener} that records operations, attempts, retries,
 * replays and rejections, plus gauges for the retry budget and circuit breaker state.
 *
 * <p>Requires {@code io.micrometer:micrometer-core} on the class path: it is an optional dependency of
 * the SDK, which the application adds itself.
 */
package io.github.resilienthttp.micrometer;
