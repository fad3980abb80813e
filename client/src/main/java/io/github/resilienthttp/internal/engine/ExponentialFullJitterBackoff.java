package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.util.random.RandomGenerator;

/** See {@link Backoff#exponentialFullJitter(Duration, Duration)}. Immutable. */
public final class ExponentialFullJitterBackoff implements Backoff {
  private final long initialNanos;
  private final long maxNanos;

  public ExponentialFullJitterBackoff(Duration initial, Duration max) {
    Ranges.atLeast("initial", initial, Duration.ofNanos(1));
    Ranges.atLeast("max", max, initial);
    this.initialNanos = saturatedNanos(initial);
    this.maxNanos = saturatedNanos(max);
  }

  @Override
  public Duration delay(int retry, RandomGenerator random) {
    Ranges.atLeast("retry", retry, 1);
    long cap = cap(retry);
    // Uniform in [0, cap] inclusive; cap + 1 cannot overflow because cap <= maxNanos < Long.MAX_VALUE.
    long nanos = cap == 0 ? 0 : random.nextLong(cap + 1);
    return Duration.ofNanos(nanos);
  }

  /** min(max, initial * 2^(retry-1)) without overflow. */
  long cap(int retry) {
    int shift = retry - 1;
    if (shift >= 63 || initialNanos > (maxNanos >> shift)) {
      return maxNanos;
    }
    return Math.min(maxNanos, initialNanos << shift);
  }

  private static long saturatedNanos(Duration d) {
    try {
      return Math.min(d.toNanos(), Long.MAX_VALUE - 1);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE - 1;
    }
  }

  @Override
  public String toString() {
    return "Backoff.exponentialFullJitter(" + Duration.ofNanos(initialNanos) + ", "
        + Duration.ofNanos(maxNanos) + ")";
  }
}
