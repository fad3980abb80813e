package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.Backoff;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/** See {@link Backoff#exponentialFullJitter(Duration, Duration)}. Immutable. */
public final class ExponentialFullJitterBackoff implements Backoff {
  private final long initialNanos;
  private final long maxNanos;

  public ExponentialFullJitterBackoff(Duration initial, Duration max) {
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(max, "max");
    if (initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("initial must be > 0 but was " + initial);
    }
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("max must be >= initial (" + initial + ") but was " + max);
    }
    this.initialNanos = saturatedNanos(initial);
    this.maxNanos = saturatedNanos(max);
  }

  @Override
  public Duration delay(int retry, RandomGenerator random) {
    if (retry < 1) {
      throw new IllegalArgumentException("retry must be >= 1 but was " + retry);
    }
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
