package io.github.resilienthttp.spring;

import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics ({@link MicrometerOperationMetrics}) for every starter-built client, in the
 * application's {@link MeterRegistry} bean, and a {@code resilient.http.retry_budget.tokens} gauge per
 * client (tag {@code client}); off with {@code resilient-http.metrics.enabled=false}.
 * An application's own {@link MicrometerOperationMetrics} bean is used instead of a new one. Without
 * a MeterRegistry bean nothing is bound.
 *
 * <p>The starter's class conditions name classes as strings: a class literal of an absent library
 * is not reliably read when a configuration class is registered directly (Boot 4's
 * ApplicationContextRunner applied this one without opentelemetry-api until they were strings).
 */
@AutoConfiguration(before = ResilientHttpAutoConfiguration.class)
@ConditionalOnClass(name = {"io.micrometer.core.instrument.MeterRegistry",
    "io.github.resilienthttp.micrometer.MicrometerOperationMetrics"})
@ConditionalOnProperty(prefix = "resilient-http.metrics", name = "enabled", matchIfMissing = true)
public class ResilientHttpMicrometerAutoConfiguration {

  /** Creates the configuration; called by Spring. */
  public ResilientHttpMicrometerAutoConfiguration() {}

  @Bean
  ClientInstrumentation resilientHttpMicrometerInstrumentation(ObjectProvider<MicrometerOperationMetrics> own,
      ObjectProvider<MeterRegistry> registry) {
    return new ClientInstrumentation() {
      private MicrometerOperationMetrics metrics;
      private boolean resolved;

      private synchronized MicrometerOperationMetrics metrics() {
        if (!resolved) {
          resolved = true;
          metrics = own.getIfAvailable(() -> {
            MeterRegistry r = registry.getIfAvailable();
            return r == null ? null : new MicrometerOperationMetrics(r);
          });
        }
        return metrics;
      }

      @Override
      public void client(String name, ResilientHttpClient.Builder builder) {
        MicrometerOperationMetrics m = metrics();
        if (m != null) builder.addListener(m);
      }

      /**
       * The budget gauge, tagged with the client's name: {@code MicrometerOperationMetrics.bindTo}
       * registers it untagged, so a second client's would be the first one's meter.
       */
      @Override
      public void built(String name, ResilientHttpClient client) {
        MeterRegistry r = registry.getIfAvailable();
        if (metrics() == null || r == null) return;
        Gauge.builder("resilient.http.retry_budget.tokens", client.retryBudget(), RetryBudget::availableTokens)
            .description("retries the retry budget would allow now").tag("client", name).register(r);
      }

      @Override
      public void breakers(String name, CircuitBreakerRegistry breakers) {
        MeterRegistry r = registry.getIfAvailable();
        if (metrics() != null && r != null) bindBreakers(r, name, breakers);
      }
    };
  }

  /**
   * A state gauge per target breaker, registered when the client first calls the target and removed
   * when the breaker is evicted; the encoding of {@code MicrometerOperationMetrics.bindCircuitBreaker}
   * (0 closed, 1 open, 2 half-open, 3 other), tagged with the target and the client.
   */
  static void bindBreakers(MeterRegistry r, String client, CircuitBreakerRegistry breakers) {
    Map<String, Meter.Id> gauges = new ConcurrentHashMap<>();
    breakers.getEventPublisher().onEntryAdded(e -> {
      CircuitBreaker cb = e.getAddedEntry();
      gauges.put(cb.getName(), Gauge.builder("resilient.http.circuit_breaker.state", cb,
              ResilientHttpMicrometerAutoConfiguration::state)
          .tag("name", cb.getName()).tag("client", client).register(r).getId());
    });
    breakers.getEventPublisher().onEntryRemoved(e -> {
      Meter.Id id = gauges.remove(e.getRemovedEntry().getName());
      if (id != null) r.remove(id);
    });
  }

  private static double state(CircuitBreaker cb) {
    switch (cb.getState()) {
      case CLOSED:
        return 0;
      case OPEN:
        return 1;
      case HALF_OPEN:
        return 2;
      default:
        return 3;
    }
  }
}
