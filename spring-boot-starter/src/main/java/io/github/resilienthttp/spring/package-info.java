/**
 * Spring Boot auto-configuration for Resilient HTTP (Boot 3.5 and 4.0): clients from
 * {@code resilient-http.clients.*} ({@link io.github.resilienthttp.spring.ResilientHttpClients},
 * {@link io.github.resilienthttp.spring.ResilientHttpClientCustomizer}), Micrometer, OpenTelemetry and
 * Actuator health when present, and signed callbacks processed once in the application's transactions
 * ({@link io.github.resilienthttp.spring.TransactionalCallbackReceiver}).
 */
package io.github.resilienthttp.spring;
