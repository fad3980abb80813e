package io.github.resilienthttp.internal.engine;

import java.time.Duration;

/**
 * Conversions of user-supplied durations that saturate instead of overflowing: a "forever" backoff,
 * a bulkhead wait of centuries or a breaker that stays open for years must never make the SDK throw
 * {@link ArithmeticException}. Not API.
 */
public final class DurationMath {
  private DurationMath() {}

  /** {@code d} in nanoseconds, {@link Long#MAX_VALUE} when longer (about 292 years); 0 when negative. */
  public static long toNanos(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    return d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L - 1 ? Long.MAX_VALUE : d.toNanos();
  }

  /** {@code d} in milliseconds, {@link Long#MAX_VALUE} when longer; 0 when negative. */
  static long toMillis(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    return d.getSeconds() >= Long.MAX_VALUE / 1_000L - 1 ? Long.MAX_VALUE : d.toMillis();
  }

  /** {@code a + b} for non-negative values, saturating at {@link Long#MAX_VALUE}. */
  public static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }
}
