package io.github.resilienthttp.internal.guard;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.ConcurrencyLimitPolicy;

/**
 * The client's adaptive overload options, as its builder was given them. Each is off by default.
 * Not API.
 *
 * @param throttling the adaptive throttling, or {@code null} for none
 * @param concurrencyLimit the adaptive concurrency limit, or {@code null} for none
 * @param rateLimitPacing whether attempts wait for a rate-limit reset the server announced
 */
public record OverloadSettings(AdaptiveThrottlingPolicy throttling,
    ConcurrencyLimitPolicy concurrencyLimit, boolean rateLimitPacing) {
  /** Every option off. */
  public static final OverloadSettings NONE = new OverloadSettings(null, null, false);

  /** {@return whether any option is on} */
  public boolean any() {
    return throttling != null || concurrencyLimit != null || rateLimitPacing;
  }
}
