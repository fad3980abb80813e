package io.github.resilienthttp;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
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
  private final Queue<AsyncWaiter> asyncWaiters = new ConcurrentLinkedQueue<>();

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
    try {
      lock.lockInterruptibly();
    } catch (InterruptedException e) {
      waiters.decrementAndGet();
      throw e;
    }
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

  /**
   * Takes a permit without blocking: the future completes with {@code true} when a permit was taken
   * (possibly later, when another attempt finishes), or {@code false} after
   * {@code min(maxWait, remainingNanos)} without one.
   */
  CompletableFuture<Boolean> acquireAsync(long remainingNanos, ScheduledExecutorService scheduler) {
    if (bulkhead.tryAcquirePermission()) {
      return CompletableFuture.completedFuture(true);
    }
    long waitNanos = Math.min(maxWaitNanos, remainingNanos);
    if (waitNanos <= 0) {
      return CompletableFuture.completedFuture(false);
    }
    AsyncWaiter waiter = new AsyncWaiter();
    waiters.incrementAndGet();
    asyncWaiters.add(waiter);
    waiter.timeout = scheduler.schedule(() -> {
      if (asyncWaiters.remove(waiter)) {
        waiters.decrementAndGet();
        waiter.future.complete(false);
      }
    }, waitNanos, TimeUnit.NANOSECONDS);
    // A permit may have been freed between the failed try and the enqueue: look again.
    admitAsyncWaiters();
    return waiter.future;
  }

  /** Hands free permits to waiting async attempts, oldest first. */
  private void admitAsyncWaiters() {
    AsyncWaiter waiter;
    while ((waiter = asyncWaiters.peek()) != null) {
      if (!bulkhead.tryAcquirePermission()) {
        return;
      }
      if (asyncWaiters.remove(waiter)) {
        waiters.decrementAndGet();
        ScheduledFuture<?> timeout = waiter.timeout;
        if (timeout != null) {
          timeout.cancel(false);
        }
        waiter.future.complete(true);
      } else {
        // Someone else took this waiter (its timeout fired): give the permit back.
        bulkhead.releasePermission();
      }
    }
  }

  /** An async attempt waiting for a permit. */
  private static final class AsyncWaiter {
    final CompletableFuture<Boolean> future = new CompletableFuture<>();
    volatile ScheduledFuture<?> timeout;
  }

  /** Whether a wait of {@code allowedNanos} was shorter than the bulkhead's own maximum wait. */
  boolean cutByDeadline(long allowedNanos) {
    return allowedNanos < maxWaitNanos;
  }

  /** Returns the permit of a finished attempt. */
  void release() {
    bulkhead.onComplete();
  }

  private void signalWaiters() {
    if (waiters.get() > 0) {
      admitAsyncWaiters();
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
}
