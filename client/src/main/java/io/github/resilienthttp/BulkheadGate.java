package io.github.resilienthttp;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Admits attempts through a resilience4j semaphore {@link Bulkhead}, waiting at most the shorter of
 * the configured maximum wait and the operation's remaining deadline.
 *
 * <p>resilience4j's own wait is fixed per bulkhead (its {@code maxWaitDuration}), so it cannot honour
 * a per-operation deadline. The gate therefore runs the bulkhead with a zero wait and does the waiting
 * itself: it retries the permit whenever the bulkhead reports a finished call. The fast path (a free
 * permit) takes no lock; the lock and signal are used only while some thread waits. Not API.
 */
final class BulkheadGate {
  private final Bulkhead bulkhead;
  private final long maxWaitNanos;
  private final AtomicInteger waiters = new AtomicInteger();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition released = lock.newCondition();

  BulkheadGate(String name, BulkheadConfig config) {
    this.maxWaitNanos = config.getMaxWaitDuration().toNanos();
    this.bulkhead = Bulkhead.of(name, BulkheadConfig.from(config).maxWaitDuration(Duration.ZERO).build());
    bulkhead.getEventPublisher().onCallFinished(e -> signalWaiters());
  }

  Bulkhead bulkhead() {
    return bulkhead;
  }

  /**
   * Takes a permit, waiting up to {@code min(maxWait, remainingNanos)}.
   *
   * @return false when no permit became free in time
   * @throws InterruptedException when interrupted while waiting
   */
  boolean acquire(long remainingNanos) throws InterruptedException {
    if (bulkhead.tryAcquirePermission()) {
      return true;
    }
    long waitNanos = Math.min(maxWaitNanos, remainingNanos);
    if (waitNanos <= 0) {
      return false;
    }
    waiters.incrementAndGet();
    lock.lockInterruptibly();
    try {
      long left = waitNanos;
      while (true) {
        if (bulkhead.tryAcquirePermission()) {
          return true;
        }
        if (left <= 0) {
          return false;
        }
        left = released.awaitNanos(left);
      }
    } finally {
      lock.unlock();
      waiters.decrementAndGet();
    }
  }

  /** Returns the permit of a finished attempt. */
  void release() {
    bulkhead.onComplete();
  }

  private void signalWaiters() {
    if (waiters.get() > 0) {
      lock.lock();
      try {
        released.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  static Duration toDuration(long nanos) {
    return Duration.ofNanos(Math.max(0, nanos));
  }

  static long millis(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
