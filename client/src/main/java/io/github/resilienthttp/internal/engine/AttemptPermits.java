package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.guard.AdaptiveLimiter;
import io.github.resilienthttp.internal.guard.BulkheadGate;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * The permits one attempt holds: the circuit breaker's permission, the bulkhead's permit and the
 * adaptive concurrency limit's permit ({@link AdaptiveLimiter}). The
 * only place that takes and gives them back: a permission is either recorded (the attempt's outcome
 * went to the breaker) or released unrecorded, a permit is released once, whatever path the attempt
 * took. {@link #releaseAll()} is idempotent, so drivers call it in {@code finally} on every path.
 *
 * <p>The base of {@link Attempt} (the permits are taken before the attempt is numbered and sent),
 * so that an attempt and its permits are one object. One per attempt (hedged attempts of one
 * operation each hold their own). Used by one driver step at a time (steps of an async attempt may
 * run on different threads, one after the other). Not API.
 */
public abstract class AttemptPermits {
  private boolean breakerHeld;
  private boolean bulkheadHeld;
  /** The limit's permit while held; given back once, with what the answer said of the load. */
  private AdaptiveLimiter.Permit limit;

  AttemptPermits() {}

  /** The operation's breaker target, or {@code null} without breakers. */
  abstract TargetCircuitBreakers.Target target();

  /** The client's bulkhead, or {@code null} without one. */
  abstract BulkheadGate bulkhead();

  /**
   * When the attempt started, in the client's {@code TimeSource}: the breaker measures its duration
   * from here.
   */
  abstract long startNanos();

  /** The client's clock, which measures the attempt's duration for the breaker. */
  abstract TimeSource clock();

  /**
   * The longest the attempt can have taken if it ends with an answer recorded in the breaker: its
   * time before the deadline, when the deadline's backstop stops its call then; otherwise
   * {@link Long#MAX_VALUE}.
   */
  abstract long longestNanos();

  /**
   * Asks the breaker for a permission.
   *
   * @return false when the breaker refuses (open, or half-open with no probe left)
   */
  final boolean tryAcquireBreaker() {
    TargetCircuitBreakers.Target target = target();
    if (target == null) {
      return true;
    }
    if (!target.breaker().tryAcquirePermission()) {
      target.observe();
      return false;
    }
    breakerHeld = true;
    return true;
  }

  /**
   * Waits for a bulkhead permit on the calling thread (see {@link BulkheadGate#acquire}).
   *
   * @return false when none was granted (timed out, or woken by {@code wakeUp})
   * @throws InterruptedException when interrupted while waiting (nothing held then)
   */
  final boolean acquireBulkhead(long allowedNanos, Supplier<? extends Future<?>> wakeUp)
      throws InterruptedException {
    if (bulkhead().acquire(allowedNanos, wakeUp)) {
      bulkheadHeld = true;
      return true;
    }
    return false;
  }

  /**
   * Takes a free bulkhead permit now, or none (see {@link BulkheadGate#tryAcquire()}).
   *
   * @return whether a permit is held (always true without a bulkhead)
   */
  final boolean tryAcquireBulkhead() {
    BulkheadGate bulkhead = bulkhead();
    if (bulkhead == null) {
      return true;
    }
    if (bulkhead.tryAcquire()) {
      bulkheadHeld = true;
      return true;
    }
    return false;
  }

  /**
   * The bulkhead granted this attempt a permit asynchronously
   * ({@link BulkheadGate#acquireAsync}): from now on it is this object's to release. The async
   * driver calls this first thing in the grant's continuation.
   */
  final void bulkheadGranted() {
    bulkheadHeld = true;
  }

  /**
   * Takes a permit under the target's adaptive limit, without waiting.
   *
   * @return false at the limit (nothing held)
   */
  final boolean tryAcquireLimit(AdaptiveLimiter limiter) {
    AdaptiveLimiter.Permit p = limiter.tryAcquire();
    if (p == null) {
      return false;
    }
    limit = p;
    return true;
  }

  /** What an attempt's answer says of the target's load, for the adaptive limit. */
  enum Load {
    /** Answered: a latency sample. */
    SUCCESS,
    /** Refused for capacity (429, 503) or timed out: the limit backs off. */
    DROPPED,
    /** Nothing to learn (cancelled, another failure). */
    IGNORED
  }

  /** Gives the limit's permit back with what the answer said (no-op without one). */
  final void recordLoad(Load load) {
    AdaptiveLimiter.Permit p = limit;
    if (p == null) {
      return;
    }
    limit = null;
    switch (load) {
      case SUCCESS -> p.success();
      case DROPPED -> p.dropped();
      default -> p.ignored();
    }
  }

  /**
   * Records the attempt's outcome in the breaker, consuming the permission.
   *
   * @param healthy whether the answer shows a healthy server
   * @param cause what to record as the error when not healthy
   */
  final void record(boolean healthy, Throwable cause) {
    if (!breakerHeld) {
      return;
    }
    breakerHeld = false;
    TargetCircuitBreakers.Target target = target();
    if (healthy) {
      // A success skipped by the breaker's shortcut needs no duration when it cannot have been
      // slow: then no clock is read for it.
      target.recordSuccess(clock(), startNanos(), longestNanos());
    } else {
      target.recordError(Math.max(0, clock().nanoTime() - startNanos()), cause);
    }
    target.observe();
  }

  /**
   * Gives back whatever is still held: an unrecorded breaker permission (cancelled, interrupted,
   * rejected by the bulkhead, or a bug in user code: a half-open breaker must never stay stuck) and
   * the bulkhead permit, and a limit permit whose answer was not recorded (as saying nothing of
   * the load). Idempotent.
   */
  final void releaseAll() {
    if (limit != null) {
      recordLoad(Load.IGNORED);
    }
    if (breakerHeld) {
      breakerHeld = false;
      target().breaker().releasePermission();
    }
    if (bulkheadHeld) {
      bulkheadHeld = false;
      bulkhead().release();
    }
  }
}
