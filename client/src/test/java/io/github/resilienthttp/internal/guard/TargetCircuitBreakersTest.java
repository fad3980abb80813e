package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;

class TargetCircuitBreakersTest {
  private static HttpUrl url(int i) {
    return HttpUrl.get("https://tenant-" + i + ".example/");
  }

  @Test
  void theNumberOfTargetsIsBoundedAndTheLeastRecentlyUsedIsEvicted() {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    TargetCircuitBreakers breakers = TargetCircuitBreakers.perTarget(registry, 100);
    TargetCircuitBreakers.Target hot = breakers.forUrl(url(0));
    for (int i = 1; i < 2_000; i++) {
      breakers.forUrl(url(i));
      breakers.forUrl(url(0)); // target 0 stays in use
    }
    assertThat(breakers.size()).isEqualTo(100);
    assertThat(registry.getAllCircuitBreakers()).hasSize(100);
    assertThat(breakers.forUrl(url(0))).isSameAs(hot);
    assertThat(registry.find("https://tenant-1999.example:443")).isPresent();
    assertThat(registry.find("https://tenant-1.example:443")).isEmpty();
  }

  @Test
  void theDefaultBoundIsDocumented() {
    assertThat(TargetCircuitBreakers.MAX_TARGETS).isEqualTo(1024);
  }
}
