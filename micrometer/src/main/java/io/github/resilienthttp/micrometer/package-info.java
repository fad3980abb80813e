/**
 * Micrometer metrics for operations: {@link io.github.resilienthttp.micrometer.MicrometerOperationMetrics}
 * is an {@link io.github.resilienthttp.OperationListener} that records operations, attempts, retries,
 * replays and rejections, plus gauges for the retry budget and circuit breaker state.
 *
 * <p>Artifact {@code io.github.resilienthttp:resilient-http-micrometer}, module
 * {@code io.github.resilienthttp.micrometer}. It depends on {@code io.micrometer:micrometer-core}.
 */
package io.github.resilienthttp.micrometer;
