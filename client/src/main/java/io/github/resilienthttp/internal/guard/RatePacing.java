package io.github.resilienthttp.internal.guard;

import io.github.resilienthttp.TimeSource;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Headers;

/**
 * One target's rate-limit pause: when an answer says the quota is used up ({@code remaining} 0)
 * until a reset {@code R} seconds away ({@link RateLimitHeaders}), attempts to the target wait
 * until then. The pause only ever moves later (an answer from before the reset that arrives late
 * cannot shorten it); an answer with quota left does not end it early, since answers race. Lock
 * free; thread-safe. Not API.
 */
public final class RatePacing {
  private final TimeSource time;
  /** {@link TimeSource#nanoTime()} until which attempts wait (compared by difference). */
  private final AtomicLong pausedUntil;

  RatePacing(TimeSource time) {
    this.time = time;
    this.pausedUntil = new AtomicLong(time.nanoTime());
  }

  /**
   * Reads an answer's rate-limit fields.
   *
   * @param headers the answer's headers
   */
  public void observe(Headers headers) {
    Optional<RateLimitHeaders.Quota> quota = RateLimitHeaders.read(headers, time.now());
    if (quota.isEmpty() || quota.get().remaining() > 0 || quota.get().reset().isZero()) {
      return;
    }
    long until = time.nanoTime() + quota.get().reset().toNanos();
    pausedUntil.accumulateAndGet(until, (a, b) -> b - a > 0 ? b : a);
  }

  /**
   * How long an attempt that starts now has to wait.
   *
   * @return nanoseconds, 0 when it need not wait
   */
  public long waitNanos() {
    return Math.max(0, pausedUntil.get() - time.nanoTime());
  }
}
