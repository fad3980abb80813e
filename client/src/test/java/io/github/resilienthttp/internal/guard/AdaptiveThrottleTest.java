package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** The SRE book's client-side throttling rule, on a fake clock and a scripted random source. */
class AdaptiveThrottleTest {
  /** A clock that moves only when told. */
  static final class FakeTime implements TimeSource {
    long nanos = 1_000_000_000_000L;

    @Override
    public long nanoTime() {
      return nanos;
    }

    @Override
    public Instant now() {
      return Instant.ofEpochSecond(0, nanos);
    }

    @Override
    public void sleep(Duration d) {
      nanos += d.toNanos();
    }
  }

  /** Draws that always return the same value, so each decision is exact. */
  private static RandomGenerator always(double value) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new UnsupportedOperationException();
      }

      @Override
      public double nextDouble() {
        return value;
      }
    };
  }

  private final FakeTime time = new FakeTime();

  private AdaptiveThrottle throttle(double k, RandomGenerator random) {
    return new AdaptiveThrottle(AdaptiveThrottlingPolicy.builder().k(k).build(), time, random);
  }

  @Test
  void aBackendThatAcceptsEverythingIsNeverThrottled() {
    AdaptiveThrottle t = throttle(2, always(0.0)); // 0.0: any positive probability would reject
    for (int i = 0; i < 10_000; i++) {
      assertThat(t.tryAcquire()).isTrue();
      t.onAccepted();
    }
    assertThat(t.rejectProbability()).isZero();
  }

  @Test
  void theProbabilityIsTheBooksFormulaOverTheWindow() {
    AdaptiveThrottle t = throttle(2, always(0.999_999));
    for (int i = 0; i < 300; i++) {
      t.tryAcquire();
    }
    for (int i = 0; i < 100; i++) {
      t.onAccepted();
    }
    // requests 300, accepts 100: (300 - 2 x 100) / 301
    assertThat(t.rejectProbability()).isCloseTo(100.0 / 301, within(1e-12));
  }

  @Test
  void acceptsOfExactlyOneInKRejectNothing() {
    AdaptiveThrottle t = throttle(2, always(0.0));
    for (int i = 0; i < 200; i++) {
      assertThat(t.tryAcquire()).isTrue();
      if (i % 2 == 0) {
        t.onAccepted();
      }
    }
    assertThat(t.rejectProbability()).isZero(); // (200 - 2 x 100) / 201
    t.tryAcquire(); // one more request without an accept tips it over
    assertThat(t.rejectProbability()).isCloseTo(1.0 / 202, within(1e-12));
  }

  @Test
  void aRejectingBackendIsThrottledAndLocalRejectionsCountAsRequests() {
    AdaptiveThrottle t = throttle(2, always(0.5));
    assertThat(t.tryAcquire()).isTrue(); // p = 0 before any request
    assertThat(t.tryAcquire()).isTrue(); // p = 1/2, and a draw of 0.5 is not below it
    assertThat(t.rejectProbability()).isCloseTo(2.0 / 3, within(1e-12));
    assertThat(t.tryAcquire()).isFalse(); // rejected locally, and counted
    assertThat(t.rejectProbability()).isCloseTo(3.0 / 4, within(1e-12));
  }

  @Test
  void theShareRejectedFollowsTheProbability() {
    AdaptiveThrottle t = throttle(2, new SplittableRandom(42));
    // Hold the backend at accepting 1 in 4 of what the client asks: p settles at 1 - 2/4 = 1/2.
    int sent = 0;
    int asked = 40_000;
    for (int i = 0; i < asked; i++) {
      if (t.tryAcquire()) {
        sent++;
      }
      if (i % 4 == 0) {
        t.onAccepted();
      }
    }
    assertThat(t.rejectProbability()).isCloseTo(0.5, within(0.001));
    assertThat((double) sent / asked).isCloseTo(0.5, within(0.02));
  }

  @Test
  void theWindowForgets() {
    AdaptiveThrottle t = throttle(2, always(0.5));
    for (int i = 0; i < 1_000; i++) {
      t.tryAcquire();
    }
    assertThat(t.rejectProbability()).isGreaterThan(0.99);
    time.nanos += Duration.ofSeconds(61).toNanos(); // half the window: half the slices are stale
    for (int i = 0; i < 1_000; i++) {
      t.tryAcquire();
      t.onAccepted();
    }
    // 2,000 requests and 1,000 accepts still in the window: (2000 - 2000) / 2001
    assertThat(t.rejectProbability()).isZero();
    time.nanos += Duration.ofMinutes(2).toNanos();
    assertThat(t.rejectProbability()).isZero();
    assertThat(t.tryAcquire()).isTrue(); // everything forgotten: the first request goes out
  }

  @Test
  void invalidSettingsFailAtBuildNamingTheFieldAndValue() {
    assertThatThrownBy(() -> AdaptiveThrottlingPolicy.builder().k(1.0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("k").hasMessageContaining("1.0");
    assertThatThrownBy(() -> AdaptiveThrottlingPolicy.builder().k(Double.NaN).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NaN");
    assertThatThrownBy(() -> AdaptiveThrottlingPolicy.builder().window(Duration.ofMillis(10)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window").hasMessageContaining("PT0.01S");
    assertThatThrownBy(() -> AdaptiveThrottlingPolicy.builder().window(null).build())
        .isInstanceOf(NullPointerException.class).hasMessageContaining("window");
    assertThat(AdaptiveThrottlingPolicy.defaults().k()).isEqualTo(2.0);
    assertThat(AdaptiveThrottlingPolicy.defaults().window()).isEqualTo(Duration.ofMinutes(2));
  }
}
