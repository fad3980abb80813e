package io.github.resilienthttp.spring;

import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.ResilientHttpClient;
import okhttp3.OkHttpClient;

/**
 * What an observability integration (Micrometer, OpenTelemetry) does to each client the starter
 * builds: before the wrap, on the builder, and after {@code build()}. Internal to the starter.
 */
interface ClientInstrumentation {

  /**
   * Adds to the OkHttpClient that is about to be wrapped (a derived builder when the client is the
   * application's bean: the bean itself is not changed).
   */
  default void okHttp(String name, OkHttpClient.Builder builder) {}

  /** Adds to the client's builder, before the application's customizers. */
  default void client(String name, ResilientHttpClient.Builder builder) {}

  /** Binds to the built client. */
  default void built(String name, ResilientHttpClient client) {}

  /** Binds to the registry the built client's per-target breakers are made in. */
  default void breakers(String name, CircuitBreakerRegistry registry) {}
}
