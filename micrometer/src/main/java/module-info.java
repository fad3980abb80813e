/**
 * Micrometer metrics for Resilient HTTP:
 * {@link io.github.resilienthttp.micrometer.MicrometerOperationMetrics}.
 */
module io.github.resilienthttp.micrometer {
  requires transitive io.github.resilienthttp;
  requires transitive micrometer.core;

  exports io.github.resilienthttp.micrometer;
}
