package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.internal.okhttp.AttemptSetupInterceptor;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationMathTest {
  @Test
  void saturatesInsteadOfOverflowing() {
    assertThat(DurationMath.toNanos(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    assertThat(DurationMath.toNanos(Duration.ofDays(365L * 300))).isEqualTo(Long.MAX_VALUE);
    assertThat(DurationMath.toMillis(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    assertThat(DurationMath.toNanos(Duration.ofMillis(1500))).isEqualTo(1_500_000_000L);
    assertThat(DurationMath.toNanos(Duration.ofMillis(-1))).isZero();
    assertThat(DurationMath.saturatedAdd(Long.MAX_VALUE - 1, 5)).isEqualTo(Long.MAX_VALUE);
    assertThat(DurationMath.saturatedAdd(2, 3)).isEqualTo(5);
  }

  @Test
  void attemptTimeoutsRoundUpSoTheyNeverFireBeforeTheDeadline() {
    assertThat(AttemptSetupInterceptor.capMillis(1)).isEqualTo(1);
    assertThat(AttemptSetupInterceptor.capMillis(199_999_999)).isEqualTo(200);
    assertThat(AttemptSetupInterceptor.capMillis(200_000_000)).isEqualTo(200);
    assertThat(AttemptSetupInterceptor.capMillis(200_000_001)).isEqualTo(201);
    assertThat(AttemptSetupInterceptor.capMillis(Long.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
  }
}
