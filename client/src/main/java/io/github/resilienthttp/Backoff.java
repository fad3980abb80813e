package io.github.resilienthttp;

import io.github.resilienthttp.internal.engine.ExponentialFullJitterBackoff;
import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * How long to wait before a retry, when the server did not say ({@code Retry-After} takes precedence
 * when it asks for longer; see {@link RetryPolicy}).
 *
 * <p>Implementations are immutable and thread-safe; randomness comes in through the
 * {@link RandomGenerator} argument so that tests can make it deterministic.
 */
@FunctionalInterface
public interface Backoff {

  /**
   * The wait before retry number {@code retry}.
   *
   * @param retry 1 for the first retry (the second attempt), 2 for the second, and so on; any
   *     positive int, including very large ones
   * @param random the random source to draw jitter from
   * @return a non-negative duration
   */
  Duration delay(int retry, RandomGenerator random);

  /**
   * Exponential backoff with "full jitter" (Marc Brooker, "Exponential Backoff And Jitter", AWS
   * Architecture Blog, 2015): for retry {@code n} the cap is {@code min(max, initial × 2^(n-1))} and
   * the wait is uniform in {@code [0, cap]}. Spreads retries of many clients so they do not arrive in
   * synchronized waves. No overflow for any {@code n}: the cap saturates at {@code max}.
   *
   * @param initial the cap of the first retry; positive
   * @param max the largest cap; at least {@code initial}
   * @return the backoff
   * @throws IllegalArgumentException when {@code initial} is not positive or {@code max < initial}
   */
  static Backoff exponentialFullJitter(Duration initial, Duration max) {
    return new ExponentialFullJitterBackoff(initial, max);
  }

  /**
   * The same wait before every retry (no jitter).
   *
   * @param delay zero or positive
   * @return the backoff
   * @throws IllegalArgumentException when {@code delay} is negative
   */
  static Backoff fixed(Duration delay) {
    Ranges.atLeast("delay", delay, Duration.ZERO);
    return new Backoff() {
      @Override
      public Duration delay(int retry, RandomGenerator random) {
        return delay;
      }

      @Override
      public String toString() {
        return "Backoff.fixed(" + delay + ")";
      }
    };
  }

  /**
   * Retry at once. Useful in tests; rarely right in production.
   *
   * @return a backoff that never waits
   */
  static Backoff none() {
    return fixed(Duration.ZERO);
  }
}
