package io.github.resilienthttp.internal.guard;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.EventProcessor;
import io.github.resilienthttp.TimeSource;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * Records attempt outcomes in a resilience4j circuit breaker whose count-based window the SDK alone
 * writes, and skips a fast success while that window is full of fast successes. Not API.
 *
 * <p>Why: resilience4j's count-based window takes a lock, builds a snapshot and recomputes the
 * rates for every recorded call: on a healthy target, a shared write in every operation and about
 * 45 ns of a healthy GET's cost (BENCHMARKS.md, issue 26, "Fourth run"). A window of the last
 * {@code n} calls that holds {@code n} fast successes is left exactly as it was by one more fast
 * success: the oldest success leaves, a success enters. Every figure the breaker
 * exposes ({@link CircuitBreaker.Metrics}: buffered, failed, slow and successful calls, both rates;
 * its state) is therefore the same whether such a success is recorded or not, so it is skipped.
 *
 * <p>How the window is known to be full of successes without taking its lock on every call:
 * <ul>
 *   <li>A <em>mark</em> says in which of the breaker's metrics (a new object after every state
 *       transition) the window was seen full of fast successes. It is set by a recorded success
 *       that read the breaker's figures (one in {@link #CHECK_ONE_IN} while not marked) and found
 *       the window closed, full, with no failed or slow call.
 *   <li>Every outcome that is not a fast success (a failure, a slow success) is counted in the mark
 *       while it is being recorded: it replaces the mark with an unmarked one that counts it before
 *       it is recorded, and with one that no longer counts it after. A success marks the window
 *       only by comparing and setting the mark it read before it read the figures, and only if no
 *       such outcome was being recorded then. So no window is marked while a failure may be
 *       entering it, nor with a failure recorded after the success read the mark. A success
 *       skipped just before a failure's mark change is concurrent with that failure's call and
 *       counts as recorded before it.
 *   <li>A success is skipped only while the breaker's metrics are the marked ones and no event
 *       consumer is registered (a consumer must see each call's event: then every success is
 *       recorded, and the figures are read only at the re-checks). Only a closed breaker's window
 *       is marked. A transition makes new metrics, except the one to open, which keeps the closed
 *       window and records in it without transitions, so a success skipped there changes nothing
 *       either. A half-open window is never marked: its successes count towards closing it.
 *   <li>One marked success in {@link #RECHECK_ONE_IN} (at random: that many on average) is recorded
 *       anyway and the figures re-read, so that a call recorded on the breaker outside the SDK
 *       (through {@code ResilientHttpClient.circuitBreakerFor}) is noticed.
 * </ul>
 *
 * <p>Only for breakers of a registry the SDK made itself, with a count-based window: a breaker that
 * other code, or another client with the same registry, also records in could hold calls the SDK
 * does not see, and a time-based window drops successes as they age. Thread-safe; a skipped success
 * reads the mark, the breaker's current metrics object and whether it has event consumers, and
 * writes nothing shared.
 */
public final class FullHealthyWindow {
  /** While marked, one success in this many is recorded and the figures re-read (a power of 2). */
  static final int RECHECK_ONE_IN = 64;
  /** While not marked, one recorded success in this many reads the figures (a power of 2). */
  static final int CHECK_ONE_IN = 16;

  /** What the window was seen to be; a new object for every change, so that a stale one loses. */
  private static final class Mark {
    /** The breaker's metrics in which the window was seen full of fast successes, or null. */
    final CircuitBreaker.Metrics fullIn;
    /** How many outcomes that are not fast successes are being recorded (0 when marked). */
    final int recording;

    Mark(CircuitBreaker.Metrics fullIn, int recording) {
      this.fullIn = fullIn;
      this.recording = recording;
    }
  }

  private final CircuitBreaker breaker;
  private final EventProcessor<?> events;
  private final long slowNanos;
  private final int windowSize;
  private final IntSupplier sampler;
  private final AtomicReference<Mark> mark = new AtomicReference<>(new Mark(null, 0));

  private FullHealthyWindow(CircuitBreaker breaker, CircuitBreakerConfig config,
      EventProcessor<?> events, IntSupplier sampler) {
    this.breaker = breaker;
    this.events = events;
    this.slowNanos = config.getSlowCallDurationThreshold().toNanos();
    this.windowSize = config.getSlidingWindowSize();
    this.sampler = sampler;
  }

  /**
   * The shortcut for {@code breaker}, or {@code null} where it does not apply (a time-based window,
   * or an event publisher that cannot say whether it has consumers). The breaker must be written
   * by the SDK alone (see the class comment).
   *
   * @param breaker a breaker of a registry the SDK made
   * @return the shortcut, or null
   */
  static FullHealthyWindow of(CircuitBreaker breaker) {
    return of(breaker, () -> ThreadLocalRandom.current().nextInt());
  }

  /**
   * As {@link #of(CircuitBreaker)}, with the source of the samples that choose which successes
   * check the window ({@code sample % CHECK_ONE_IN == 0}, {@code % RECHECK_ONE_IN}); for tests.
   */
  static FullHealthyWindow of(CircuitBreaker breaker, IntSupplier sampler) {
    CircuitBreakerConfig config = breaker.getCircuitBreakerConfig();
    if (config.getSlidingWindowType() != CircuitBreakerConfig.SlidingWindowType.COUNT_BASED
        || !(breaker.getEventPublisher() instanceof EventProcessor<?> events)) {
      return null;
    }
    return new FullHealthyWindow(breaker, config, events, sampler);
  }

  /**
   * Records a success that took {@code nanos}, or skips it (see the class comment).
   *
   * @param nanos the attempt's duration, in nanoseconds, at least 0
   */
  void onSuccess(long nanos) {
    onSuccess(nanos, sampler.getAsInt());
  }

  /**
   * Whether a success is known to be fast, without its duration, when its attempt had at most
   * {@code longestNanos} before the deadline that stops its call: at most half the slow-call
   * threshold. Such an attempt took longer than the threshold only if the deadline's backstop let
   * its call run past the deadline by as much again (see {@code AttemptPermits#record}).
   *
   * @param longestNanos the attempt's time before its deadline, in nanoseconds;
   *     {@link Long#MAX_VALUE} when no deadline bounds it
   * @return whether {@link #onFastSuccess} may take its success
   */
  boolean knownFast(long longestNanos) {
    return longestNanos <= slowNanos / 2;
  }

  /**
   * Records a success {@linkplain #knownFast known to be fast}, or skips it, as
   * {@link #onSuccess(long)} does; the clock is read for its duration only when it is recorded
   * (a re-check, a window not full of fast successes, an event consumer), so a skipped success
   * reads no clock.
   *
   * @param clock the clock that measures the attempt
   * @param startNanos when the attempt started, on {@code clock}
   */
  void onFastSuccess(TimeSource clock, long startNanos) {
    int sample = sampler.getAsInt();
    Mark seen = mark.get();
    if (seen.fullIn != null && (sample & (RECHECK_ONE_IN - 1)) != 0
        && breaker.getMetrics() == seen.fullIn && !events.hasConsumers()) {
      return; // what onSuccess(nanos, sample) does for a fast success, without nanos
    }
    onSuccess(Math.max(0, clock.nanoTime() - startNanos), sample);
  }

  /** {@link #onSuccess(long)} with the sample that decides whether it checks the window. */
  private void onSuccess(long nanos, int sample) {
    if (nanos > slowNanos) {
      recordCounted(() -> breaker.onSuccess(nanos, TimeUnit.NANOSECONDS));
      return;
    }
    Mark seen = mark.get();
    boolean marked = seen.fullIn != null;
    boolean checks = (sample & ((marked ? RECHECK_ONE_IN : CHECK_ONE_IN) - 1)) == 0;
    boolean stillFull = marked && !checks && breaker.getMetrics() == seen.fullIn;
    if (stillFull && !events.hasConsumers()) {
      return;
    }
    breaker.onSuccess(nanos, TimeUnit.NANOSECONDS); // recorded for an event consumer when still full
    if (!stillFull && (marked || checks)) {
      check(seen);
    }
  }

  /**
   * Records an error (a failure the breaker counts, unless its config ignores the exception).
   *
   * @param nanos the attempt's duration, in nanoseconds, at least 0
   * @param cause the error
   */
  void onError(long nanos, Throwable cause) {
    recordCounted(() -> breaker.onError(nanos, TimeUnit.NANOSECONDS, cause));
  }

  /**
   * Records an outcome that may break the window's run of successes, counted in the mark (unmarked)
   * while it is recorded.
   */
  private void recordCounted(Runnable record) {
    mark.updateAndGet(m -> new Mark(null, m.recording + 1));
    try {
      record.run();
    } finally {
      mark.updateAndGet(m -> new Mark(null, m.recording - 1));
    }
  }

  /**
   * Reads the window's figures and marks or unmarks it, unless the mark changed since {@code seen}
   * was read (an outcome recorded since then decides). Never marks while an outcome that is not a
   * fast success was being recorded when {@code seen} was read.
   */
  private void check(Mark seen) {
    CircuitBreaker.Metrics metrics = breaker.getMetrics();
    boolean full = seen.recording == 0 && breaker.getState() == CircuitBreaker.State.CLOSED
        && metrics.getNumberOfFailedCalls() == 0 && metrics.getNumberOfSlowCalls() == 0
        && metrics.getNumberOfBufferedCalls() >= windowSize;
    CircuitBreaker.Metrics fullIn = full ? metrics : null;
    if (seen.fullIn != fullIn) {
      mark.compareAndSet(seen, new Mark(fullIn, seen.recording));
    }
  }

  /**
   * Whether the window is marked full of fast successes now.
   *
   * @return whether successes may be skipped (for tests)
   */
  boolean isMarked() {
    return mark.get().fullIn != null;
  }
}
