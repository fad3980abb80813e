package io.github.resilienthttp;

/**
 * An adaptive limit on concurrent attempts per target ({@code scheme://host:port}): the limit is
 * not a guess fixed in advance, as a {@link ResilientHttpClient.Builder#bulkhead bulkhead}'s is,
 * but follows the target's latency. When answers slow down (a queue is building at the server), the
 * limit shrinks; when they are fast again, it grows back. The algorithms are those of Netflix's
 * <a href="https://github.com/Netflix/concurrency-limits">concurrency-limits</a> (also behind
 * Envoy's adaptive concurrency filter), which the SDK uses rather than writing them again:
 *
 * <ul>
 *   <li>{@link #vegas()}: TCP Vegas' rule: the queue is estimated as
 *       {@code limit × (1 − minimum latency / latency)}; the limit grows while the queue is short
 *       and shrinks when it is long (Netflix {@code VegasLimit});
 *   <li>{@link #gradient()}: the gradient between a long-term and a short-term average latency
 *       scales the limit, with a small queue allowance (Netflix {@code Gradient2Limit}).
 * </ul>
 *
 * <p>An attempt beyond the current limit is not sent and does not wait: the operation ends with
 * {@link ConcurrencyLimitExceededException} (a {@link BulkheadFullException}, so code that handles
 * a full bulkhead handles it too), and {@link OperationListener#limited} is told. A hedge beyond the
 * limit is simply not sent. What the limiter hears: an answer other than {@code 429}/{@code 503}
 * is a latency sample; a {@code 429}, a {@code 503} or a timeout is a drop (the limit backs off);
 * an attempt that was cancelled or failed for another reason is ignored.
 *
 * <p><b>Dependency.</b> The algorithms live in {@code com.netflix.concurrency-limits:
 * concurrency-limits-core} (tested with 0.5.3; it depends on SLF4J only), an optional dependency
 * of the SDK: add it to the application to use this policy.
 * {@link ResilientHttpClient.Builder#build()} fails with an {@link IllegalStateException} naming the
 * artifact when it is missing. On the module path, the jar (which has no module descriptor) is the
 * automatic module {@code concurrency.limits.core}: add it with
 * {@code --add-modules concurrency.limits.core} (the SDK reads it with {@code requires static}).
 *
 * <p>Immutable and thread-safe; each client keeps one limiter per target. Default off; set with
 * {@link ResilientHttpClient.Builder#concurrencyLimit(ConcurrencyLimitPolicy)}, which excludes a
 * bulkhead.
 */
public final class ConcurrencyLimitPolicy {
  /** The greatest limit accepted. */
  public static final int MAX_LIMIT = 100_000;

  /** The algorithm that moves the limit. */
  public enum Algorithm {
    /** TCP Vegas' queue estimate (Netflix {@code VegasLimit}). */
    VEGAS,
    /** Long- and short-term latency gradient (Netflix {@code Gradient2Limit}). */
    GRADIENT
  }

  private final Algorithm algorithm;
  private final int initialLimit;
  private final int minLimit;
  private final int maxLimit;

  private ConcurrencyLimitPolicy(Builder b) {
    this.algorithm = b.algorithm;
    this.initialLimit = b.initialLimit;
    this.minLimit = b.minLimit;
    this.maxLimit = b.maxLimit;
  }

  /**
   * Vegas with the defaults: initial limit 20, between 1 and 200.
   *
   * @return the policy
   */
  public static ConcurrencyLimitPolicy vegas() {
    return builder(Algorithm.VEGAS).build();
  }

  /**
   * Gradient with the defaults: initial limit 20, between 1 and 200.
   *
   * @return the policy
   */
  public static ConcurrencyLimitPolicy gradient() {
    return builder(Algorithm.GRADIENT).build();
  }

  /**
   * A builder for {@code algorithm} with the defaults (initial 20, min 1, max 200).
   *
   * @param algorithm the algorithm
   * @return a new builder
   * @throws NullPointerException when {@code algorithm} is {@code null}
   */
  public static Builder builder(Algorithm algorithm) {
    return new Builder(java.util.Objects.requireNonNull(algorithm, "algorithm"));
  }

  /**
   * The algorithm.
   *
   * @return the algorithm
   */
  public Algorithm algorithm() {
    return algorithm;
  }

  /**
   * The limit a target starts with.
   *
   * @return {@link #minLimit()} to {@link #maxLimit()}
   */
  public int initialLimit() {
    return initialLimit;
  }

  /**
   * The least the limit shrinks to.
   *
   * @return 1 or more
   */
  public int minLimit() {
    return minLimit;
  }

  /**
   * The most the limit grows to.
   *
   * @return up to {@value #MAX_LIMIT}
   */
  public int maxLimit() {
    return maxLimit;
  }

  @Override
  public String toString() {
    return "ConcurrencyLimitPolicy{" + algorithm + ", initial=" + initialLimit + ", min=" + minLimit
        + ", max=" + maxLimit + "}";
  }

  /** Builds a {@link ConcurrencyLimitPolicy}; validates at {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final Algorithm algorithm;
    private int initialLimit = 20;
    private int minLimit = 1;
    private int maxLimit = 200;

    private Builder(Algorithm algorithm) {
      this.algorithm = algorithm;
    }

    /**
     * The limit a target starts with. Default 20.
     *
     * @param limit {@code minLimit} to {@code maxLimit}
     * @return this builder
     */
    public Builder initialLimit(int limit) {
      this.initialLimit = limit;
      return this;
    }

    /**
     * The least the limit shrinks to. Default 1.
     *
     * @param limit 1 to {@code maxLimit}
     * @return this builder
     */
    public Builder minLimit(int limit) {
      this.minLimit = limit;
      return this;
    }

    /**
     * The most the limit grows to. Default 200.
     *
     * @param limit {@code minLimit} to {@value #MAX_LIMIT}
     * @return this builder
     */
    public Builder maxLimit(int limit) {
      this.maxLimit = limit;
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalArgumentException when a limit is out of range (the message names the field
     *     and the value)
     */
    public ConcurrencyLimitPolicy build() {
      if (minLimit < 1) {
        throw new IllegalArgumentException("minLimit must be at least 1: " + minLimit);
      }
      if (maxLimit < minLimit || maxLimit > MAX_LIMIT) {
        throw new IllegalArgumentException("maxLimit must be minLimit (" + minLimit + ") to "
            + MAX_LIMIT + ": " + maxLimit);
      }
      if (initialLimit < minLimit || initialLimit > maxLimit) {
        throw new IllegalArgumentException("initialLimit must be minLimit (" + minLimit
            + ") to maxLimit (" + maxLimit + "): " + initialLimit);
      }
      return new ConcurrencyLimitPolicy(this);
    }
  }
}
