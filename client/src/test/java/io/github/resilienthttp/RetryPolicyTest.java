package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

  @Test
  void defaults() {
    RetryPolicy p = RetryPolicy.defaults();
    assertThat(p.maxAttempts()).isEqualTo(3);
    assertThat(p.deadline()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.maxRetryAfter()).isEqualTo(Duration.ofSeconds(60));
    assertThat(p.attemptTimeout()).isEmpty();
    assertThat(p.backoff().toString()).contains("exponentialFullJitter(PT0.1S, PT5S)");
  }

  @Test
  void invalidSettingsFailAtBuildNamingFieldAndValue() {
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be in 1..100 but was 0");
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(101).build())
        .hasMessageContaining("maxAttempts").hasMessageContaining("101");
    assertThatThrownBy(() -> RetryPolicy.builder().deadline(Duration.ZERO).build())
        .hasMessageContaining("deadline").hasMessageContaining("PT0S");
    assertThatThrownBy(() -> RetryPolicy.builder().deadline(Duration.ofDays(2)).build())
        .hasMessageContaining("deadline").hasMessageContaining("PT48H");
    assertThatThrownBy(() -> RetryPolicy.builder().attemptTimeout(Duration.ofMillis(-5)).build())
        .hasMessageContaining("attemptTimeout").hasMessageContaining("PT-0.005S");
    assertThatThrownBy(() -> RetryPolicy.builder().maxRetryAfter(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("maxRetryAfter").hasMessageContaining("PT-1S");
  }

  @Test
  void toBuilderCopiesEverySetting() {
    RetryPolicy p = RetryPolicy.builder().maxAttempts(7).deadline(Duration.ofSeconds(3))
        .attemptTimeout(Duration.ofMillis(500)).maxRetryAfter(Duration.ofSeconds(2))
        .backoff(Backoff.none()).build();
    RetryPolicy copy = p.toBuilder().build();
    assertThat(copy.toString()).isEqualTo(p.toString());
  }
}
