package io.github.resilienthttp.spring;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One client's health from its per-target circuit breakers, independent of the Boot version's health
 * API: UP while no breaker is open; the configured status (DOWN by default) while one is open or
 * forced open, with the open targets listed, like resilience4j's {@code circuitBreakers} indicator.
 * Half-open breakers are listed but keep UP (probes are getting through).
 */
record BreakerHealth(boolean open, Map<String, Object> details) {

  static BreakerHealth of(ResilientHttpClients clients, String name) {
    Optional<CircuitBreakerRegistry> registry = clients.circuitBreakerRegistry(name);
    Map<String, Object> details = new LinkedHashMap<>();
    if (registry.isEmpty()) {
      details.put("circuitBreakers", "not managed by the starter");
      return new BreakerHealth(false, details);
    }
    List<String> openTargets = new ArrayList<>();
    Map<String, Object> notClosed = new LinkedHashMap<>();
    int count = 0;
    for (CircuitBreaker cb : registry.get().getAllCircuitBreakers()) {
      count++;
      CircuitBreaker.State state = cb.getState();
      if (state == CircuitBreaker.State.CLOSED) continue;
      if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN) {
        openTargets.add(cb.getName());
      }
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("state", state.name());
      d.put("failureRate", cb.getMetrics().getFailureRate() + "%");
      d.put("bufferedCalls", cb.getMetrics().getNumberOfBufferedCalls());
      d.put("notPermittedCalls", cb.getMetrics().getNumberOfNotPermittedCalls());
      notClosed.put(cb.getName(), d);
    }
    details.put("targets", count);
    details.put("openTargets", openTargets);
    if (!notClosed.isEmpty()) details.put("circuitBreakers", notClosed);
    return new BreakerHealth(!openTargets.isEmpty(), details);
  }
}
