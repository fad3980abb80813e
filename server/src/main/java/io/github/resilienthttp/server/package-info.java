/**
 * The server's half of the Idempotency-Key contract, free of any web framework:
 * {@link io.github.resilienthttp.server.IdempotencyGuard} (scope, fingerprint, claim, replay, the
 * draft's problem answers), its stores ({@link io.github.resilienthttp.server.InMemoryIdempotencyStore},
 * {@link io.github.resilienthttp.server.JdbcIdempotencyStore}) and its listener. Adapters live in
 * {@code .servlet} (a Servlet filter) and {@code .jdk} (the JDK's HTTP server).
 */
package io.github.resilienthttp.server;
