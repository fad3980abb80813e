package io.github.resilienthttp.spring;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.time.Duration;
import java.util.function.Consumer;
import okhttp3.OkHttpClient;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns one client's properties into SDK settings. Each property is applied and then checked by the
 * SDK's own validation ({@code build()} after every step), so that a failure names the property
 * that caused it, as Spring Boot's failure analyzer prints it:
 * {@code Invalid value '0' for configuration property 'resilient-http.clients.payments.max-attempts'}.
 */
final class ClientAssembler {
  private final String prefix;
  private final ResilientHttpProperties.Client p;

  ClientAssembler(String name, ResilientHttpProperties.Client properties) {
    this.prefix = "resilient-http.clients." + name + ".";
    this.p = properties;
  }

  /** Applies one property; fails naming it when the SDK refuses the value. */
  private void checkRun(String property, Object value, Runnable step) {
    PropertyCheck.run(prefix + property, value, step);
  }

  RetryPolicy retryPolicy() {
    RetryPolicy.Builder b = RetryPolicy.builder();
    if (p.getMaxAttempts() != null) {
      checkRun("max-attempts", p.getMaxAttempts(), () -> b.maxAttempts(p.getMaxAttempts()).build());
    }
    ResilientHttpProperties.Backoff backoff = p.getBackoff();
    if (backoff.getBase() != null || backoff.getCap() != null) {
      Duration base = backoff.getBase() != null ? backoff.getBase() : Duration.ofMillis(100);
      Duration defaultCap = Duration.ofSeconds(5);
      Duration cap = backoff.getCap() != null ? backoff.getCap()
          : base.compareTo(defaultCap) > 0 ? base : defaultCap;
      String property = backoff.getCap() == null ? "backoff.base" : "backoff.cap";
      Object value = backoff.getCap() == null ? base : cap;
      checkRun(property, value, () -> b.backoff(Backoff.exponentialFullJitter(base, cap)).build());
    }
    if (p.getDeadline() != null) {
      checkRun("deadline", p.getDeadline(), () -> b.deadline(p.getDeadline()).build());
    }
    if (p.getAttemptTimeout() != null) {
      checkRun("attempt-timeout", p.getAttemptTimeout(), () -> b.attemptTimeout(p.getAttemptTimeout()).build());
    }
    if (p.getMaxRetryAfter() != null) {
      checkRun("max-retry-after", p.getMaxRetryAfter(), () -> b.maxRetryAfter(p.getMaxRetryAfter()).build());
    }
    return b.build();
  }

  IdempotencyKeyPolicy idempotencyKeyPolicy() {
    ResilientHttpProperties.Idempotency i = p.getIdempotency();
    IdempotencyKeyPolicy.Builder b = IdempotencyKeyPolicy.builder();
    if (i.getHeaderName() != null) {
      checkRun("idempotency.header-name", i.getHeaderName(), () -> b.headerName(i.getHeaderName()).build());
    }
    if (i.getFormat() != null) b.format(i.getFormat());
    if (i.getSend() != null) b.send(i.getSend());
    return b.build();
  }

  RetryBudget retryBudget() {
    ResilientHttpProperties.Budget budget = p.getBudget();
    switch (budget.getType()) {
      case NONE:
        return RetryBudget.none();
      case UNLIMITED:
        return RetryBudget.unlimited();
      default:
        RetryBudget.TokenBucketBuilder b = RetryBudget.tokenBucketBuilder();
        if (budget.getRetryRatio() != null) {
          checkRun("budget.retry-ratio", budget.getRetryRatio(), () -> b.retryRatio(budget.getRetryRatio()).build());
        }
        if (budget.getMinRetriesPerSecond() != null) {
          checkRun("budget.min-retries-per-second", budget.getMinRetriesPerSecond(),
              () -> b.minRetriesPerSecond(budget.getMinRetriesPerSecond()).build());
        }
        if (budget.getMaxTokens() != null) {
          checkRun("budget.max-tokens", budget.getMaxTokens(), () -> b.maxTokens(budget.getMaxTokens()).build());
        }
        return b.build();
    }
  }

  /** The breaker config from the properties, starting from the SDK's defaults. */
  CircuitBreakerRegistry circuitBreakerRegistry() {
    ResilientHttpProperties.CircuitBreaker c = p.getCircuitBreaker();
    CircuitBreakerConfig.Builder b = CircuitBreakerConfig.from(ResilientHttpClient.defaultCircuitBreakerConfig());
    String at = "circuit-breaker.";
    if (c.getFailureRateThreshold() != null) {
      checkRun(at + "failure-rate-threshold", c.getFailureRateThreshold(),
          () -> b.failureRateThreshold(c.getFailureRateThreshold()));
    }
    if (c.getSlidingWindowSize() != null) {
      checkRun(at + "sliding-window-size", c.getSlidingWindowSize(), () -> {
        b.slidingWindowSize(c.getSlidingWindowSize());
        if (c.getMinimumNumberOfCalls() == null) {
          b.minimumNumberOfCalls(c.getSlidingWindowSize()); // the SDK's default: one whole window
        }
      });
    }
    if (c.getMinimumNumberOfCalls() != null) {
      checkRun(at + "minimum-number-of-calls", c.getMinimumNumberOfCalls(),
          () -> b.minimumNumberOfCalls(c.getMinimumNumberOfCalls()));
    }
    if (c.getWaitDurationInOpenState() != null) {
      checkRun(at + "wait-duration-in-open-state", c.getWaitDurationInOpenState(),
          () -> b.waitDurationInOpenState(c.getWaitDurationInOpenState()));
    }
    if (c.getPermittedNumberOfCallsInHalfOpenState() != null) {
      checkRun(at + "permitted-number-of-calls-in-half-open-state", c.getPermittedNumberOfCallsInHalfOpenState(),
          () -> b.permittedNumberOfCallsInHalfOpenState(c.getPermittedNumberOfCallsInHalfOpenState()));
    }
    return CircuitBreakerRegistry.of(b.build());
  }

  /** The bulkhead, or null when max-concurrent-calls is not set. */
  BulkheadConfig bulkhead() {
    ResilientHttpProperties.Bulkhead bh = p.getBulkhead();
    if (bh.getMaxConcurrentCalls() == null) {
      if (bh.getMaxWait() != null) {
        throw new InvalidConfigurationPropertyValueException(prefix + "bulkhead.max-wait", bh.getMaxWait(),
            "needs bulkhead.max-concurrent-calls");
      }
      return null;
    }
    BulkheadConfig.Builder b = BulkheadConfig.custom().maxWaitDuration(Duration.ZERO);
    checkRun("bulkhead.max-concurrent-calls", bh.getMaxConcurrentCalls(),
        () -> b.maxConcurrentCalls(bh.getMaxConcurrentCalls()));
    if (bh.getMaxWait() != null) {
      checkRun("bulkhead.max-wait", bh.getMaxWait(), () -> b.maxWaitDuration(bh.getMaxWait()));
    }
    return b.build();
  }

  /** The hedging policy, or null when hedging.delay is not set. */
  HedgingPolicy hedging() {
    ResilientHttpProperties.Hedging h = p.getHedging();
    if (h.getDelay() == null) {
      if (h.getMaxHedges() != null || h.getKeyedPosts() != null) {
        throw new InvalidConfigurationPropertyValueException(prefix + "hedging.delay", null,
            "hedging.max-hedges and hedging.keyed-posts need hedging.delay");
      }
      return null;
    }
    HedgingPolicy.Builder b = HedgingPolicy.builder();
    checkRun("hedging.delay", h.getDelay(), () -> b.delay(h.getDelay()).build());
    if (h.getMaxHedges() != null) {
      checkRun("hedging.max-hedges", h.getMaxHedges(), () -> b.maxHedges(h.getMaxHedges()).build());
    }
    if (h.getKeyedPosts() != null) b.keyedPosts(h.getKeyedPosts());
    return b.build();
  }

  /** Applies the timeouts to an OkHttpClient the starter builds. */
  void timeouts(OkHttpClient.Builder b) {
    ResilientHttpProperties.OkHttp o = p.getOkhttp();
    timeout("okhttp.connect-timeout", o.getConnectTimeout(), b::connectTimeout);
    timeout("okhttp.read-timeout", o.getReadTimeout(), b::readTimeout);
    timeout("okhttp.write-timeout", o.getWriteTimeout(), b::writeTimeout);
    timeout("okhttp.call-timeout", o.getCallTimeout(), b::callTimeout);
  }

  private void timeout(String property, Duration value, Consumer<Duration> setter) {
    if (value != null) checkRun(property, value, () -> setter.accept(value));
  }

  void replayHeader(ResilientHttpClient.Builder b) {
    if (p.getReplayHeader() != null) {
      checkRun("replay-header", p.getReplayHeader(), () -> b.replayHeader(p.getReplayHeader()));
    }
  }
}
