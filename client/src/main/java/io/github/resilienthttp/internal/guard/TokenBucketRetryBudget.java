package io.github.resilienthttp.internal.guard;

import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.TimeSource;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The token bucket behind {@link RetryBudget#tokenBucket()}; see there for the contract and the
 * guarantee. Not API.
 *
 * <p>Tokens are held in fixed point, {@value #UNITS_PER_TOKEN} units per token, so that every deposit
 * and withdrawal is exact integer arithmetic. With {@code r = minRetriesPerSecond} tokens per second,
 * the time floor is exactly {@code r} units per nanosecond.
 *
 * <p>The state is one immutable {@code (units, nanos)} pair behind one {@link AtomicReference}:
 * "the bucket held {@code units} at time {@code nanos}"; the floor is credited lazily from
 * {@code nanos} to the clock reading of the next operation. Refill and withdrawal are one
 * compare-and-set, which is what makes the guarantee hold under concurrency: with the tokens and the
 * refill timestamp in two separate atomics, a thread paused between advancing the timestamp and
 * crediting the tokens would later credit stale time on top of a bucket that others had refilled.
 * Timestamps only move forward (a clock reading older than the state credits nothing), so in the
 * order of the successful compare-and-sets the bucket behaves exactly like a sequential one.
 *
 * <p>A state changes only when the content changes: a deposit into a full bucket and a refused
 * retry write nothing, because the state then describes the same content at every later time. So a
 * healthy client, whose bucket stays full, costs one volatile read per operation.
 */
public final class TokenBucketRetryBudget implements RetryBudget {
  static final long UNITS_PER_TOKEN = 1_000_000_000L;

  private record State(long units, long nanos) {}

  private final double retryRatio;
  private final long ratioUnits;
  private final int minRetriesPerSecond;
  private final int maxTokens;
  private final long maxUnits;
  private final TimeSource timeSource;
  private final AtomicReference<State> state;

  /**
   * @param ratioUnits {@code retryRatio} in units, already rounded down
   */
  public TokenBucketRetryBudget(
      double retryRatio, long ratioUnits, int minRetriesPerSecond, int maxTokens,
      TimeSource timeSource) {
    this.retryRatio = retryRatio;
    this.ratioUnits = ratioUnits;
    this.minRetriesPerSecond = minRetriesPerSecond;
    this.maxTokens = maxTokens;
    this.maxUnits = maxTokens * UNITS_PER_TOKEN;
    this.timeSource = timeSource;
    this.state = new AtomicReference<>(new State(maxUnits, timeSource.nanoTime()));
  }

  @Override
  public void onFirstAttempt() {
    while (true) {
      State s = state.get();
      if (s.units == maxUnits) {
        return; // full stays full: nothing to write
      }
      long now = timeSource.nanoTime(); // read after the state: with a monotonic clock, not older
      long units = Math.min(maxUnits, refilled(s, now) + ratioUnits);
      if (state.compareAndSet(s, new State(units, later(s.nanos, now)))) {
        return;
      }
    }
  }

  @Override
  public boolean tryAcquireRetry() {
    while (true) {
      State s = state.get();
      long now = timeSource.nanoTime();
      long units = refilled(s, now);
      if (units < UNITS_PER_TOKEN) {
        return false;
      }
      if (state.compareAndSet(s, new State(units - UNITS_PER_TOKEN, later(s.nanos, now)))) {
        return true;
      }
    }
  }

  @Override
  public void refundRetry() {
    while (true) {
      State s = state.get();
      long now = timeSource.nanoTime();
      long units = Math.min(maxUnits, refilled(s, now) + UNITS_PER_TOKEN);
      if (state.compareAndSet(s, new State(units, later(s.nanos, now)))) {
        return;
      }
    }
  }

  @Override
  public double availableTokens() {
    State s = state.get();
    return (double) refilled(s, timeSource.nanoTime()) / UNITS_PER_TOKEN;
  }

  /** The content of {@code s} at time {@code now}: its units plus the floor since, capped. */
  private long refilled(State s, long now) {
    long elapsed = now - s.nanos; // nanoTime differences are exact even across a wrap of the long
    if (elapsed <= 0 || minRetriesPerSecond == 0 || s.units >= maxUnits) {
      return s.units;
    }
    long room = maxUnits - s.units;
    // Compare before multiplying: elapsed × r overflows after ~10 days of quiet at r = 10000.
    return elapsed >= room / minRetriesPerSecond + 1 ? maxUnits : s.units + elapsed * minRetriesPerSecond;
  }

  /** The later of two nanoTime readings; compared by difference, as nanoTime may wrap around. */
  private static long later(long a, long b) {
    return b - a > 0 ? b : a;
  }

  @Override
  public String toString() {
    return "RetryBudget.tokenBucket(retryRatio=" + retryRatio + ", minRetriesPerSecond="
        + minRetriesPerSecond + ", maxTokens=" + maxTokens + ")";
  }
}
