package io.github.resilienthttp.internal.guard;

/**
 * One target's adaptive concurrency limit, as the engine sees it: a permit per attempt, and what
 * the attempt's answer says about the target's load. The SDK's own seam, so that only
 * {@link NetflixLimiter} touches Netflix's classes (an optional dependency). Thread-safe. Not API.
 */
public interface AdaptiveLimiter {
  /**
   * Takes a permit if fewer than the limit are in flight; never waits.
   *
   * @return the permit, or {@code null} at the limit
   */
  Permit tryAcquire();

  /** {@return the current limit} */
  int limit();

  /** One attempt's place under the limit; exactly one of its methods is called, once. */
  interface Permit {
    /** The attempt was answered: its latency is a sample. */
    void success();

    /** The target refused the attempt for want of capacity (429, 503) or it timed out. */
    void dropped();

    /** The attempt says nothing of the target's load (cancelled, failed for another reason). */
    void ignored();
  }
}
