package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.Backoff;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Property(tries = 2000)
  void fullJitterStaysWithinTheCapForAnyRetry(
      @ForAll @IntRange(min = 1, max = Integer.MAX_VALUE) int retry,
      @ForAll @LongRange(min = 1, max = 10_000) long initialMillis,
      @ForAll @LongRange(min = 0, max = 1_000_000) long extraMillis,
      @ForAll long seed) {
    Duration initial = Duration.ofMillis(initialMillis);
    Duration max = initial.plusMillis(extraMillis);
    Backoff backoff = Backoff.exponentialFullJitter(initial, max);

    Duration d = backoff.delay(retry, new SplittableRandom(seed));

    long cap = retry >= 63 ? max.toNanos()
        : Math.min(max.toNanos(), multiplySaturated(initial.toNanos(), 1L << Math.min(retry - 1, 62)));
    assertThat(d).isGreaterThanOrEqualTo(Duration.ZERO);
    assertThat(d.toNanos()).isLessThanOrEqualTo(cap);
  }

  @Test
  void capDoublesThenSaturatesWithoutOverflow() {
    ExponentialFullJitterBackoff b =
        new ExponentialFullJitterBackoff(Duration.ofMillis(100), Duration.ofSeconds(5));
    assertThat(b.cap(1)).isEqualTo(Duration.ofMillis(100).toNanos());
    assertThat(b.cap(2)).isEqualTo(Duration.ofMillis(200).toNanos());
    assertThat(b.cap(6)).isEqualTo(Duration.ofMillis(3200).toNanos());
    assertThat(b.cap(7)).isEqualTo(Duration.ofSeconds(5).toNanos());
    assertThat(b.cap(64)).isEqualTo(Duration.ofSeconds(5).toNanos());
    assertThat(b.cap(10_000)).isEqualTo(Duration.ofSeconds(5).toNanos());
    assertThat(b.cap(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(5).toNanos());
  }

  @Test
  void hugeDurationsDoNotOverflow() {
    Backoff b = Backoff.exponentialFullJitter(Duration.ofDays(365 * 100), Duration.ofDays(365 * 1000));
    Duration d = b.delay(10_000, new SplittableRandom(1));
    assertThat(d).isBetween(Duration.ZERO, Duration.ofDays(365 * 1000));
  }

  @Test
  void jitterSpreadsOverTheWholeRange() {
    Backoff b = Backoff.exponentialFullJitter(Duration.ofMillis(1000), Duration.ofMillis(1000));
    RandomGenerator random = new SplittableRandom(42);
    int[] buckets = new int[10];
    int n = 10_000;
    for (int i = 0; i < n; i++) {
      long ms = b.delay(1, random).toMillis();
      buckets[(int) Math.min(9, ms / 100)]++;
    }
    // Uniform: each tenth of [0, 1000 ms] gets about 1,000 of 10,000 draws.
    for (int count : buckets) {
      assertThat(count).isBetween(850, 1150);
    }
  }

  @Test
  void sameSeedSameDelays() {
    Backoff b = Backoff.exponentialFullJitter(Duration.ofMillis(100), Duration.ofSeconds(5));
    RandomGenerator r1 = new SplittableRandom(7);
    RandomGenerator r2 = new SplittableRandom(7);
    for (int retry = 1; retry <= 20; retry++) {
      assertThat(b.delay(retry, r1)).isEqualTo(b.delay(retry, r2));
    }
  }

  @Test
  void invalidArgumentsFailEarlyNamingTheValue() {
    assertThatThrownBy(() -> Backoff.exponentialFullJitter(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("initial").hasMessageContaining("PT0S");
    assertThatThrownBy(() -> Backoff.exponentialFullJitter(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max").hasMessageContaining("PT1S");
    assertThatThrownBy(() -> Backoff.fixed(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay");
    Backoff b = Backoff.exponentialFullJitter(Duration.ofMillis(1), Duration.ofMillis(2));
    assertThatThrownBy(() -> b.delay(0, new SplittableRandom(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retry");
  }

  private static long multiplySaturated(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return (hi != 0 || lo < 0) ? Long.MAX_VALUE : lo;
  }
}
