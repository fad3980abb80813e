package io.github.resilienthttp;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.HttpUrl;

/**
 * Finds the resilience4j {@link CircuitBreaker} for a request: one per target
 * ({@code scheme://host:port}) from a registry, or a single breaker for everything. Also remembers
 * when each breaker last opened, to tell callers how long it stays open. Not API.
 */
final class TargetCircuitBreakers {
  private final CircuitBreakerRegistry registry;
  private final CircuitBreaker single;
  private final Map<String, CircuitBreaker> byTarget = new ConcurrentHashMap<>();
  private final Map<CircuitBreaker, Instant> openedAt = new ConcurrentHashMap<>();

  private TargetCircuitBreakers(CircuitBreakerRegistry registry, CircuitBreaker single) {
    this.registry = registry;
    this.single = single;
    if (single != null) {
      watch(single);
    }
  }

  static TargetCircuitBreakers perTarget(CircuitBreakerRegistry registry) {
    return new TargetCircuitBreakers(registry, null);
  }

  static TargetCircuitBreakers single(CircuitBreaker breaker) {
    return new TargetCircuitBreakers(null, breaker);
  }

  /** The breaker name for a URL: {@code scheme://host:port}. */
  static String targetName(HttpUrl url) {
    return url.scheme() + "://" + url.host() + ":" + url.port();
  }

  CircuitBreaker forUrl(HttpUrl url) {
    if (single != null) {
      return single;
    }
    return byTarget.computeIfAbsent(targetName(url), name -> watch(registry.circuitBreaker(name)));
  }

  private CircuitBreaker watch(CircuitBreaker breaker) {
    breaker.getEventPublisher().onStateTransition(e -> {
      CircuitBreaker.State to = e.getStateTransition().getToState();
      if (to == CircuitBreaker.State.OPEN || to == CircuitBreaker.State.FORCED_OPEN) {
        openedAt.put(breaker, e.getCreationTime().toInstant());
      }
    });
    return breaker;
  }

  /** Estimated time until an open breaker lets a probe through. */
  Duration waitLeft(CircuitBreaker breaker, Instant now) {
    Instant opened = openedAt.get(breaker);
    if (opened == null) {
      return Duration.ZERO;
    }
    Long waitMillis = breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1);
    Duration left = Duration.between(now, opened.plusMillis(waitMillis == null ? 0 : waitMillis));
    return left.isNegative() ? Duration.ZERO : left;
  }
}
