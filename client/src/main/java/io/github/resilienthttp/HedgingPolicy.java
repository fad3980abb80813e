package io.github.resilienthttp;

import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Hedged requests: when an idempotent attempt has not answered within the hedging delay, send
 * another copy and take the first acceptable answer (gRPC proposal A6 {@code hedgingPolicy};
 * Dean and Barroso, "The Tail at Scale", CACM 2013). Hedging cuts tail latency, not failures: a
 * slow server answers through the copy that got a fast one.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#delay(Duration) delay}: how long an attempt may go unanswered before the
 *     next copy is sent</td><td>(required, or {@code percentileDelay})</td><td>0..24 h</td></tr>
 * <tr><td>{@link Builder#percentileDelay(double, Duration, Duration) percentileDelay}: the delay
 *     as a percentile of the target's recent attempt latencies, clamped to {@code [min, max]};
 *     {@code max} until {@value #MIN_SAMPLES} latencies are known</td><td>off</td>
 *     <td>percentile 50..99.9</td></tr>
 * <tr><td>{@link Builder#maxHedges(int) maxHedges}: copies besides the first attempt</td>
 *     <td>1</td><td>1..4</td></tr>
 * <tr><td>{@link Builder#keyedPosts(boolean) keyedPosts}: hedge a POST (or PATCH) that sends an
 *     idempotency key</td><td>false</td><td></td></tr>
 * </table>
 *
 * <p>What is hedged: idempotent operations only, by default safe methods (GET, HEAD, OPTIONS,
 * TRACE) and PUT and DELETE (RFC 9110 §9.2.2). A keyed POST only when {@code keyedPosts(true)}:
 * the server then sees two requests with one key at once, which a server that follows the IETF
 * draft "The Idempotency-Key HTTP Header Field" answers with 409 (in progress) for the later one;
 * the SDK takes that 409 as non-fatal and waits for the other copy. An operation that is not
 * hedgeable runs as if no policy were set, and so do plain calls on
 * {@link ResilientHttpClient#okHttpClient()} (one OkHttp call cannot be sent twice at once).
 *
 * <p>The rule, per attempt's answer: an acceptable one (a success, or a final answer such as 404)
 * wins: every other attempt is cancelled and its response closed. A retryable answer (503, a reset,
 * a timeout) is non-fatal: the next copy starts at once instead of after the delay, as in gRPC.
 * Hedges are attempts: a hedged operation sends at most {@code 1 + maxHedges} copies and never more
 * than {@link RetryPolicy#maxAttempts()}; each hedge takes a retry budget token, a breaker
 * permission and a bulkhead permit (without waiting for one: a hedge that would wait is not sent);
 * a refusal only means no new copy, never the end of the attempts in flight. There are no backoff
 * retries besides the copies. One deadline bounds them all; cancelling the operation cancels them
 * all. With every copy failed and none left to send, the operation ends as a retry loop does after
 * its last attempt (the last response, or {@link RetriesExhaustedException} /
 * {@link OutcomeUnknownException}).
 *
 * <p>Immutable and thread-safe.
 */
public final class HedgingPolicy {
  /** Latencies a target needs before {@code percentileDelay} trusts its percentile. */
  public static final int MIN_SAMPLES = 20;
  static final int MAX_HEDGES = 4;

  private final Duration delay;
  private final double percentile;
  private final Duration minDelay;
  private final Duration maxDelay;
  private final int maxHedges;
  private final boolean keyedPosts;

  private HedgingPolicy(Builder b) {
    this.delay = b.delay;
    this.percentile = b.percentile;
    this.minDelay = b.minDelay;
    this.maxDelay = b.maxDelay;
    this.maxHedges = b.maxHedges;
    this.keyedPosts = b.keyedPosts;
  }

  /**
   * A policy with a fixed delay and one hedge.
   *
   * @param delay how long an attempt may go unanswered before a copy is sent (0..24 h)
   * @return the policy
   * @throws IllegalArgumentException when the delay is out of range
   */
  public static HedgingPolicy fixedDelay(Duration delay) {
    return builder().delay(delay).build();
  }

  /** {@return a builder} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The fixed delay, when the policy has one.
   *
   * @return the fixed delay, or empty for a percentile delay
   */
  public Optional<Duration> delay() {
    return Optional.ofNullable(delay);
  }

  /**
   * The percentile of recent latencies used as the delay, or 0 for a fixed delay.
   *
   * @return the percentile (50..99.9), or 0
   */
  public double percentile() {
    return percentile;
  }

  /** {@return the lower bound of a percentile delay} */
  public Duration minDelay() {
    return minDelay;
  }

  /** {@return the upper bound of a percentile delay, used until enough latencies are known} */
  public Duration maxDelay() {
    return maxDelay;
  }

  /** {@return the number of copies besides the first attempt} */
  public int maxHedges() {
    return maxHedges;
  }

  /** {@return whether a POST or PATCH that sends an idempotency key is hedged} */
  public boolean keyedPosts() {
    return keyedPosts;
  }

  /**
   * Whether an operation is hedged under this policy.
   *
   * @param method the request's method
   * @param keySent whether the operation sends an idempotency key
   * @return whether it is hedged
   */
  public boolean hedges(String method, boolean keySent) {
    switch (method) {
      case "GET":
      case "HEAD":
      case "OPTIONS":
      case "TRACE":
      case "PUT":
      case "DELETE":
        return true;
      default:
        return keyedPosts && keySent;
    }
  }

  @Override
  public String toString() {
    return "HedgingPolicy{" + (delay != null ? "delay=" + delay
        : "p" + percentile + " in [" + minDelay + ", " + maxDelay + "]")
        + ", maxHedges=" + maxHedges + (keyedPosts ? ", keyedPosts" : "") + "}";
  }

  /** Builds a {@link HedgingPolicy}; validates at {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private Duration delay;
    private double percentile;
    private Duration minDelay = Duration.ZERO;
    private Duration maxDelay;
    private int maxHedges = 1;
    private boolean keyedPosts;

    private Builder() {}

    /**
     * A fixed hedging delay; replaces a percentile delay.
     *
     * @param delay 0..24 h (0: all copies at once)
     * @return this builder
     */
    public Builder delay(Duration delay) {
      this.delay = Objects.requireNonNull(delay, "delay");
      this.percentile = 0;
      this.maxDelay = null;
      return this;
    }

    /**
     * A delay from the target's recent latencies (a ring of the last 256 attempts that got an
     * answer): their {@code percentile}, clamped to {@code [min, max]}. Until
     * {@value HedgingPolicy#MIN_SAMPLES} latencies are known, {@code max}. Replaces a fixed delay.
     *
     * @param percentile 50 to 99.9, e.g. 95 for p95
     * @param min the shortest delay (0..max)
     * @param max the longest delay (min..24 h), and the delay while too few latencies are known
     * @return this builder
     */
    public Builder percentileDelay(double percentile, Duration min, Duration max) {
      this.percentile = percentile;
      this.minDelay = Objects.requireNonNull(min, "min");
      this.maxDelay = Objects.requireNonNull(max, "max");
      this.delay = null;
      return this;
    }

    /**
     * Copies besides the first attempt. Default 1.
     *
     * @param maxHedges 1..4
     * @return this builder
     */
    public Builder maxHedges(int maxHedges) {
      this.maxHedges = maxHedges;
      return this;
    }

    /**
     * Whether to hedge a POST or PATCH that sends an idempotency key. Default false: only safe
     * methods, PUT and DELETE.
     *
     * @param keyedPosts whether to hedge keyed POSTs
     * @return this builder
     */
    public Builder keyedPosts(boolean keyedPosts) {
      this.keyedPosts = keyedPosts;
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalArgumentException naming the field and value, when one is out of range or
     *     neither a delay nor a percentile delay was given
     */
    public HedgingPolicy build() {
      if (delay == null && maxDelay == null) {
        throw new IllegalArgumentException("delay or percentileDelay must be set");
      }
      if (delay != null) {
        RetryPolicy.Builder.checkRange("delay", delay, Duration.ZERO);
      } else {
        Ranges.check("percentile", percentile, 50, 99.9);
        RetryPolicy.Builder.checkRange("minDelay", minDelay, Duration.ZERO);
        RetryPolicy.Builder.checkRange("maxDelay", maxDelay, minDelay);
      }
      Ranges.check("maxHedges", maxHedges, 1, MAX_HEDGES);
      return new HedgingPolicy(this);
    }
  }
}
