package io.github.resilienthttp;

import io.github.resilienthttp.internal.guard.TokenBucketRetryBudget;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Objects;

/**
 * Caps retries as a share of traffic, so that an outage cannot multiply the load on a server that is
 * already failing. {@link RetryPolicy#maxAttempts()} bounds one operation; a budget bounds all of them
 * together: with 3 attempts per operation and no budget, a dead dependency receives 3× its normal
 * traffic; with the default budget, about 1.1×.
 *
 * <p>One budget is shared by all operations of a client, and may be shared between clients (for
 * example all clients that call the same service). The retry loop calls {@link #onFirstAttempt()}
 * when an operation starts its first attempt, and {@link #tryAcquireRetry()} when it has decided to
 * retry, <em>before</em> waiting the backoff: operations asleep in backoff already hold their token,
 * so many of them waking up together cannot overshoot the budget. When the budget refuses, the
 * operation does not retry (see {@link RetryBudgetExhaustedException}).
 *
 * <h2>Token bucket</h2>
 *
 * {@link #tokenBucket()} is the budget to use. Its unit is the token: one retry costs one token.
 *
 * <table>
 * <caption>Settings of {@link #tokenBucketBuilder()}</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link TokenBucketBuilder#retryRatio(double) retryRatio}: tokens deposited by every first
 *     attempt, i.e. retries allowed per first attempt</td><td>0.1</td><td>[1e-9, 1000]</td></tr>
 * <tr><td>{@link TokenBucketBuilder#minRetriesPerSecond(int) minRetriesPerSecond}: tokens deposited
 *     per second of time, so that a quiet client can still retry</td><td>3</td><td>0..10000</td></tr>
 * <tr><td>{@link TokenBucketBuilder#maxTokens(int) maxTokens}: the bucket's capacity, i.e. the
 *     largest burst of retries</td><td>10 seconds of the floor, at least 10:
 *     {@code max(10, 10 × minRetriesPerSecond)}, so 30 by default</td><td>1..1000000</td></tr>
 * <tr><td>{@link TokenBucketBuilder#timeSource(TimeSource) timeSource}: the clock of the time floor
 *     (only {@link TimeSource#nanoTime()} is used)</td><td>{@link TimeSource#system()}</td>
 *     <td>any</td></tr>
 * </table>
 *
 * <p>The bucket starts full ({@code maxTokens}), as in gRPC, so that a new client can retry its first
 * failures; deposits beyond {@code maxTokens} are dropped. Deposits come from every first attempt,
 * whatever its outcome, and from the passing of time: there is no state in which the bucket stops
 * refilling, so the budget always recovers after an outage.
 *
 * <p><b>Guarantee.</b> Over any interval of length {@code T} seconds of the time source,
 *
 * <pre>   retries allowed ≤ retryRatio × first attempts + minRetriesPerSecond × T + maxTokens</pre>
 *
 * where {@code maxTokens} bounds what the bucket held when the interval began. The bound is exact:
 * tokens are kept in fixed point at 10<sup>-9</sup> token, {@code retryRatio} is kept to 9 decimal
 * places rounded down, and the time floor is credited in whole nanoseconds, so rounding can only
 * allow fewer retries, never more. Over long intervals, retries therefore tend to at most
 * {@code retryRatio} per first attempt plus {@code minRetriesPerSecond} per second.
 *
 * <p><b>Source.</b> Finagle's {@code RetryBudget}: a deposit per request, a withdrawal per retry
 * (refused, withdrawing nothing, when the balance is short), and a minimum number of retries per
 * second. How it compares with gRPC retry throttling (gRFC A6) and AWS SDK retry quotas:
 * {@code docs/design/retry-budget.md}.
 *
 * <p><b>Thread safety.</b> Every budget returned here is thread-safe and lock-free: concurrent
 * operations update it with compare-and-set, never under a lock, and no background thread refills it
 * (the time floor is computed from the clock when the bucket is used). Implementations of this
 * interface must be thread-safe too.
 */
public interface RetryBudget {

  /** Records that an operation starts its first attempt; for a token bucket, deposits tokens. */
  void onFirstAttempt();

  /**
   * Asks for one retry, before waiting its backoff.
   *
   * @return {@code true} when the retry may go ahead (for a token bucket, one whole token was
   *     withdrawn); {@code false} when the budget is exhausted, in which case nothing was withdrawn
   */
  boolean tryAcquireRetry();

  /**
   * Gives back a retry that {@link #tryAcquireRetry()} allowed but that never happened: the
   * operation was cancelled, interrupted, rejected by the circuit breaker or the bulkhead, or ran out
   * of time during the wait. A retry that never reached the wire is no load on the server, so it
   * should not count against the budget. Called at most once per successful
   * {@link #tryAcquireRetry()}. The default does nothing; the token bucket puts the token back
   * (never above its capacity).
   */
  default void refundRetry() {}

  /**
   * The number of retries that would be allowed now, possibly fractional, for a metrics gauge:
   * {@code 0} for {@link #none()}, {@link Double#POSITIVE_INFINITY} for {@link #unlimited()}.
   *
   * @return the retries allowed now
   */
  double availableTokens();

  /**
   * A token bucket with the defaults in the table above, on {@link TimeSource#system()}.
   *
   * @return a new budget
   */
  static RetryBudget tokenBucket() {
    return tokenBucketBuilder().build();
  }

  /**
   * A builder for a token bucket, starting from the defaults in the table above.
   *
   * @return a new builder
   */
  static TokenBucketBuilder tokenBucketBuilder() {
    return new TokenBucketBuilder();
  }

  /**
   * Never allows a retry: every operation makes exactly one attempt.
   *
   * @return a budget that refuses every retry
   */
  static RetryBudget none() {
    return new RetryBudget() {
      @Override
      public void onFirstAttempt() {}

      @Override
      public boolean tryAcquireRetry() {
        return false;
      }

      @Override
      public double availableTokens() {
        return 0;
      }

      @Override
      public String toString() {
        return "RetryBudget.none()";
      }
    };
  }

  /**
   * Always allows a retry: only {@link RetryPolicy#maxAttempts()} limits retries. Makes load during an
   * outage up to {@code maxAttempts} times the normal load; for tests, or when the server side sheds
   * load by itself.
   *
   * @return a budget that allows every retry
   */
  static RetryBudget unlimited() {
    return new RetryBudget() {
      @Override
      public void onFirstAttempt() {}

      @Override
      public boolean tryAcquireRetry() {
        return true;
      }

      @Override
      public double availableTokens() {
        return Double.POSITIVE_INFINITY;
      }

      @Override
      public String toString() {
        return "RetryBudget.unlimited()";
      }
    };
  }

  /**
   * Builds a token-bucket {@link RetryBudget}; validates everything in {@link #build()}. Each
   * {@code build()} returns a new, independent, full bucket. Not thread-safe.
   */
  final class TokenBucketBuilder {
    static final double MAX_RETRY_RATIO = 1000;
    static final int MAX_MIN_RETRIES_PER_SECOND = 10_000;
    static final int MAX_MAX_TOKENS = 1_000_000;

    private double retryRatio = 0.1;
    private int minRetriesPerSecond = 3;
    private int maxTokens;
    private boolean maxTokensSet; // when not set, maxTokens is derived from minRetriesPerSecond
    private TimeSource timeSource = TimeSource.system();

    private TokenBucketBuilder() {}

    /**
     * Tokens deposited by every first attempt, i.e. the share of first attempts that may be retried:
     * more than 0, at most 1000; kept to 9 decimal places, rounded down. Default 0.1 (10%).
     *
     * @param retryRatio the share of first attempts that may be retried
     * @return this builder
     */
    public TokenBucketBuilder retryRatio(double retryRatio) {
      this.retryRatio = retryRatio;
      return this;
    }

    /**
     * Tokens deposited per second whatever the traffic, so that a client with little traffic can
     * still retry: 0 (none) to 10000. Default 3.
     *
     * @param minRetriesPerSecond tokens per second
     * @return this builder
     */
    public TokenBucketBuilder minRetriesPerSecond(int minRetriesPerSecond) {
      this.minRetriesPerSecond = minRetriesPerSecond;
      return this;
    }

    /**
     * The bucket's capacity and initial content, i.e. the largest burst of retries: 1 to 1000000.
     * Default {@code max(10, 10 × minRetriesPerSecond)}: ten seconds of the floor, as in Finagle.
     *
     * @param maxTokens the bucket's capacity
     * @return this builder
     */
    public TokenBucketBuilder maxTokens(int maxTokens) {
      this.maxTokens = maxTokens;
      this.maxTokensSet = true;
      return this;
    }

    /**
     * The clock of the time floor; only {@link TimeSource#nanoTime()} is read. Default
     * {@link TimeSource#system()}. A budget shared between clients has its own clock, independent of
     * the clients' time sources.
     *
     * @param timeSource the clock
     * @return this builder
     */
    public TokenBucketBuilder timeSource(TimeSource timeSource) {
      this.timeSource = Objects.requireNonNull(timeSource, "timeSource");
      return this;
    }

    /**
     * Builds the budget.
     *
     * @return the budget
     * @throws IllegalArgumentException naming the field and the value when a setting is out of range
     */
    public RetryBudget build() {
      // Tokens are kept to 9 decimal places: a smaller ratio would silently be 0.
      if (!(retryRatio >= 1e-9 && retryRatio <= MAX_RETRY_RATIO)) { // rejects NaN too
        throw new IllegalArgumentException(
            "retryRatio must be in [1e-9, 1000] but was " + retryRatio);
      }
      checkRange("minRetriesPerSecond", minRetriesPerSecond, 0, MAX_MIN_RETRIES_PER_SECOND);
      int capacity = maxTokensSet ? maxTokens : Math.max(10, 10 * minRetriesPerSecond);
      checkRange("maxTokens", capacity, 1, MAX_MAX_TOKENS);
      // BigDecimal.valueOf uses the shortest decimal that reads back as the double, i.e. what the
      // caller wrote: 0.1 becomes exactly 100_000_000 units, not one unit more or less.
      long ratioUnits = BigDecimal.valueOf(retryRatio)
          .movePointRight(9).setScale(0, RoundingMode.FLOOR).longValueExact();
      return new TokenBucketRetryBudget(
          retryRatio, ratioUnits, minRetriesPerSecond, capacity, timeSource);
    }

    private static void checkRange(String field, int value, int min, int max) {
      if (value < min || value > max) {
        throw new IllegalArgumentException(
            field + " must be in " + min + ".." + max + " but was " + value);
      }
    }
  }
}
