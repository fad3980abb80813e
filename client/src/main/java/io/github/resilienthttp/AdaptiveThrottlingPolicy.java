package io.github.resilienthttp;

import java.time.Duration;
import java.util.Objects;

/**
 * Client-side adaptive throttling, per target ({@code scheme://host:port}): when a backend has been
 * refusing work for want of capacity, the client refuses a share of new attempts itself, before
 * sending them, so that an overloaded backend spends nothing on requests it would refuse anyway.
 * The rule is the one of Google's <em>Site Reliability Engineering</em>, chapter 21 "Handling
 * Overload", section "Client-side throttling": over a sliding window, with {@code requests} the
 * attempts the client wanted to send and {@code accepts} those the backend accepted, each new
 * attempt is refused locally with probability
 *
 * <pre>  max(0, (requests − K × accepts) / (requests + 1))</pre>
 *
 * <p>so that nothing is refused while the backend accepts more than 1/K of what is asked, and the
 * refused share grows smoothly as it accepts less. A locally refused attempt still counts as a
 * request (the book's definition), so a backend that recovers is probed at a rate that follows its
 * acceptance, and the refusals stop as its accepts come back.
 *
 * <p>An attempt counts as <em>accepted</em> when it got an answer other than {@code 429} or
 * {@code 503} (a 2xx, a 4xx, even a 500: the backend spent its capacity on it); an attempt that
 * got no answer (a connection that could not be made, a timeout, a reset) or a {@code 429}/{@code 503}
 * is a request without an accept (so is an attempt that was cancelled). Every attempt the throttle
 * lets through or refuses counts as a request when it decides.
 *
 * <p>A refused attempt is never sent: the operation ends with {@link ThrottledException} (or, after
 * an earlier attempt whose outcome is unknown, {@link OutcomeUnknownException} with it attached as
 * suppressed), and {@link OperationListener#throttled} is told. The draws come from the client's
 * {@link ResilientHttpClient.Builder#random(java.util.random.RandomGenerator) random source} and
 * the window's clock is its {@link ResilientHttpClient.Builder#timeSource(TimeSource) time
 * source}, so tests are exact.
 *
 * <p>Immutable and thread-safe. Build with {@link #builder()}; {@link #defaults()} is K = 2 over a
 * 2-minute window, the book's values. Set on a client with
 * {@link ResilientHttpClient.Builder#adaptiveThrottling(AdaptiveThrottlingPolicy)}; default off.
 */
public final class AdaptiveThrottlingPolicy {
  /** The least K: at 1, any refusal at all would throttle locally. */
  public static final double MIN_K = 1.1;
  /** The greatest K accepted. */
  public static final double MAX_K = 100;

  private final double k;
  private final Duration window;

  private AdaptiveThrottlingPolicy(Builder b) {
    this.k = b.k;
    this.window = b.window;
  }

  /**
   * K = 2 over a 2-minute window.
   *
   * @return the default policy
   */
  public static AdaptiveThrottlingPolicy defaults() {
    return builder().build();
  }

  /**
   * A builder with the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The multiplier K of the rule: local refusal starts once accepts fall below 1/K of requests.
   *
   * @return K, {@value #MIN_K} to {@value #MAX_K}
   */
  public double k() {
    return k;
  }

  /**
   * The sliding window over which requests and accepts are counted (in 60 slices).
   *
   * @return the window, 1 s to 1 h
   */
  public Duration window() {
    return window;
  }

  @Override
  public String toString() {
    return "AdaptiveThrottlingPolicy{k=" + k + ", window=" + window + "}";
  }

  /** Builds an {@link AdaptiveThrottlingPolicy}; validates at {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private double k = 2;
    private Duration window = Duration.ofMinutes(2);

    private Builder() {}

    /**
     * The multiplier K. Default 2; smaller refuses sooner (less wasted work at the backend, more
     * requests refused that it could have served).
     *
     * @param k {@value #MIN_K} to {@value #MAX_K}
     * @return this builder
     */
    public Builder k(double k) {
      this.k = k;
      return this;
    }

    /**
     * The sliding window of the counts, kept in 60 slices (a slice of 2 s by default). Default
     * 2 minutes.
     *
     * @param window 1 s to 1 h
     * @return this builder
     */
    public Builder window(Duration window) {
      this.window = window;
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalArgumentException when K or the window is out of range (the message names the
     *     field and the value)
     * @throws NullPointerException when the window is {@code null}
     */
    public AdaptiveThrottlingPolicy build() {
      if (!(k >= MIN_K && k <= MAX_K)) {
        throw new IllegalArgumentException("k must be " + MIN_K + " to " + MAX_K + ": " + k);
      }
      Objects.requireNonNull(window, "window");
      if (window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("window must be 1 s to 1 h: " + window);
      }
      return new AdaptiveThrottlingPolicy(this);
    }
  }
}
