package io.github.resilienthttp.internal.guard;

import io.github.resilienthttp.TimeSource;
import java.time.Duration;
import java.util.Objects;

/**
 * Client-side adaptive throttling, per target: when a backend has been rejecting requests, the
 * client rejects a share of new requests itself, before sending them, so that an overloaded backend
 * spends nothing on requests it would refuse anyway. The rule is the one of Google's <em>Site
 * Reliability Engineering</em>, chapter 21 "Handling Overload", section "Client-side throttling":
 * over a sliding window, with {@code requests} the attempts the client wanted to send and
 * {@code accepts} those the backend accepted, each new attempt is rejected locally with probability
 *
 * <pre>  max(0, (requests − K × accepts) / (requests + 1))</pre>
 *
 * <p>so that nothing is rejected while the backend accepts more than 1/K of what is asked, and the
 * rejected share grows smoothly as it accepts less. A locally rejected attempt still counts as a
 * request (the book's definition), so a backend that recovers is probed at a rate that follows its
 * acceptance. An answer counts as <em>not accepted</em> when it says the backend refused the work
 * for want of capacity: {@code 429}, {@code 503}, and a connection that could not be made; every
 * other answer (a 2xx, a 4xx, even a 500) is an accept, since the backend spent its capacity on it.
 *
 * <p>Immutable and thread-safe; the counts live in an {@link AdaptiveThrottle} per target
 * ({@code scheme://host:port}). Build with {@link #builder()}; {@link #defaults()} is K = 2 over a
 * 2-minute window, the book's values. Not API yet: the client does not take it (issue 28 wires it
 * in and moves it to the API package).
 */
public final class AdaptiveThrottling {
  /** The least K: at 1, any rejection at all would reject locally. */
  public static final double MIN_K = 1.1;
  /** The greatest K accepted. */
  public static final double MAX_K = 100;

  private final double k;
  private final Duration window;
  private final TimeSource timeSource;

  private AdaptiveThrottling(Builder b) {
    this.k = b.k;
    this.window = b.window;
    this.timeSource = b.timeSource;
  }

  /**
   * K = 2 over a 2-minute window, on the system clock.
   *
   * @return the default throttling
   */
  public static AdaptiveThrottling defaults() {
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

  /** {@return the multiplier K of the rule: local rejection starts once accepts fall below 1/K of requests} */
  public double k() {
    return k;
  }

  /** {@return the sliding window over which requests and accepts are counted} */
  public Duration window() {
    return window;
  }

  /** {@return the clock of the window} */
  public TimeSource timeSource() {
    return timeSource;
  }

  @Override
  public String toString() {
    return "AdaptiveThrottling{k=" + k + ", window=" + window + "}";
  }

  /** Builds an {@link AdaptiveThrottling}; validates at {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private double k = 2;
    private Duration window = Duration.ofMinutes(2);
    private TimeSource timeSource = TimeSource.system();

    private Builder() {}

    /**
     * The multiplier K. Default 2; smaller rejects sooner (less wasted work at the backend, more
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
     * The clock of the window (a fake one in tests). Default {@link TimeSource#system()}.
     *
     * @param timeSource the clock
     * @return this builder
     */
    public Builder timeSource(TimeSource timeSource) {
      this.timeSource = timeSource;
      return this;
    }

    /**
     * Builds the throttling.
     *
     * @return the throttling
     * @throws IllegalArgumentException when K or the window is out of range (the message names the
     *     field and the value)
     * @throws NullPointerException when the window or the time source is {@code null}
     */
    public AdaptiveThrottling build() {
      if (!(k >= MIN_K && k <= MAX_K)) {
        throw new IllegalArgumentException("k must be " + MIN_K + " to " + MAX_K + ": " + k);
      }
      Objects.requireNonNull(window, "window");
      Objects.requireNonNull(timeSource, "timeSource");
      if (window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("window must be 1 s to 1 h: " + window);
      }
      return new AdaptiveThrottling(this);
    }
  }
}
