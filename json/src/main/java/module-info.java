/**
 * Typed JSON for Resilient HTTP operations with Jackson 2 ({@code com.fasterxml.jackson}):
 * {@link io.github.resilienthttp.json.JsonCodec}, {@link io.github.resilienthttp.json.HttpStatusException}
 * and {@link io.github.resilienthttp.json.ProblemDetails}.
 */
module io.github.resilienthttp.json {
  requires transitive io.github.resilienthttp;
  requires transitive com.fasterxml.jackson.databind;
  requires com.fasterxml.jackson.core;
  requires okio;

  exports io.github.resilienthttp.json;
}
