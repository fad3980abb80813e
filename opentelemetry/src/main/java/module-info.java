/**
 * OpenTelemetry tracing for Resilient HTTP:
 * {@link io.github.resilienthttp.opentelemetry.ResilientHttpTracing}.
 */
module io.github.resilienthttp.opentelemetry {
  requires transitive io.github.resilienthttp;
  requires transitive io.opentelemetry.api;
  requires transitive io.opentelemetry.context;

  exports io.github.resilienthttp.opentelemetry;
}
