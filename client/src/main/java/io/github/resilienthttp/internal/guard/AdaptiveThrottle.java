package io.github.resilienthttp.internal.guard;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.TimeSource;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.random.RandomGenerator;

/**
 * The counts of {@link AdaptiveThrottlingPolicy} for one target, and its decision. Not API.
 *
 * <p>The window is a ring of {@value #SLICES} slices; each slice holds its start (in slice numbers
 * since the clock's origin), its requests and its accepts, in one {@link AtomicLongArray}. A slice
 * whose start is older than the window is reset by the first writer that finds it stale (a
 * compare-and-set on the start, so exactly one thread resets it); a reader skips stale slices. Counts
 * that race with a reset may land in the new slice or be lost: the rule is a probability over two
 * minutes, and one count more or less does not change it. No lock; thread-safe.
 */
public final class AdaptiveThrottle {
  static final int SLICES = 60;
  private static final int START = 0;
  private static final int REQUESTS = 1;
  private static final int ACCEPTS = 2;

  private final double k;
  private final long sliceNanos;
  private final TimeSource time;
  private final RandomGenerator random;
  private final AtomicLongArray slices = new AtomicLongArray(SLICES * 3);

  /**
   * Counts for one target.
   *
   * @param config K and the window
   * @param time the window's clock
   * @param random the draws of the decision
   */
  public AdaptiveThrottle(AdaptiveThrottlingPolicy config, TimeSource time, RandomGenerator random) {
    this.k = config.k();
    this.sliceNanos = Math.max(1, config.window().toNanos() / SLICES);
    this.time = time;
    this.random = random;
    long now = sliceNumber();
    for (int i = 0; i < SLICES; i++) {
      slices.set(i * 3 + START, now - SLICES); // every slice starts stale
    }
  }

  /**
   * Decides whether to send an attempt, and counts it as a request either way.
   *
   * @return true to send it, false to reject it locally
   */
  public boolean tryAcquire() {
    long now = sliceNumber();
    double p = rejectProbability(now);
    add(now, REQUESTS);
    return p <= 0 || random.nextDouble() >= p;
  }

  /** Counts an answer by which the backend accepted the work (see {@link AdaptiveThrottlingPolicy}). */
  public void onAccepted() {
    add(sliceNumber(), ACCEPTS);
  }

  /**
   * The probability with which the next attempt is rejected now: {@code max(0, (requests − K ×
   * accepts) / (requests + 1))} over the window.
   *
   * @return 0 to just under 1
   */
  public double rejectProbability() {
    return rejectProbability(sliceNumber());
  }

  private double rejectProbability(long now) {
    long requests = 0;
    long accepts = 0;
    for (int i = 0; i < SLICES; i++) {
      long start = slices.get(i * 3 + START);
      if (now - start < SLICES) {
        requests += slices.get(i * 3 + REQUESTS);
        accepts += slices.get(i * 3 + ACCEPTS);
      }
    }
    return Math.max(0, (requests - k * accepts) / (requests + 1));
  }

  private void add(long now, int field) {
    int base = (int) Math.floorMod(now, (long) SLICES) * 3;
    long start = slices.get(base + START);
    if (start != now && slices.compareAndSet(base + START, start, now)) {
      slices.set(base + REQUESTS, 0);
      slices.set(base + ACCEPTS, 0);
    }
    slices.incrementAndGet(base + field);
  }

  private long sliceNumber() {
    return Math.floorDiv(time.nanoTime(), sliceNanos);
  }
}
