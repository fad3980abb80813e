package io.github.resilienthttp.internal.guard;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilienthttp.internal.engine.DurationMath;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Admits attempts through a resilience4j semaphore {@link Bulkhead}, waiting at most the shorter of
 * the configured maximum wait and the operation's remaining deadline.
 *
 * <p>resilience4j's own wait is fixed per bulkhead (its {@code maxWaitDuration}), so it cannot honour
 * a per-operation deadline. The gate therefore runs the bulkhead with a zero wait and queues waiters
 * itself: blocking ({@code execute()}, plain calls) and non-blocking ({@code executeAsync()}) waiters
 * stand in one first-in-first-out queue, and a newcomer takes a free permit directly only when nobody
 * is waiting. Each returned permit is handed to the oldest live waiter by a drain loop that never
 * recurses: a release made while a drain runs (for example by a waiter's continuation, on the same
 * stack) only asks the running drain for one more pass. A waiter that gave up (timed out, cancelled,
 * interrupted) is only marked done: the drain drops it when it reaches the head, and sweeps the
 * queue once the waiters that gave up outnumber the live ones. Giving up never searches the queue,
 * so N waiters that give up cost O(N) in all, in any order (a search per waiter cost O(N²) under
 * overload, when every queued operation times out).
 *
 * <p>The fast path (a free permit, nobody waiting) takes no lock and allocates nothing. Thread-safe.
 * Not API.
 */
public final class BulkheadGate {
  private final Bulkhead bulkhead;
  private final long maxWaitNanos;
  private final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();
  /** Drain requests not yet served; only the thread that raised it from 0 drains. */
  private final AtomicInteger drainRequests = new AtomicInteger();
  /** Waiters in {@link #waiters}, and how many of them gave up: kept apart from the O(n) size(). */
  private final AtomicInteger queuedCount = new AtomicInteger();
  private final AtomicInteger gaveUpCount = new AtomicInteger();
  /** Fewer waiters that gave up than this are never swept: the head check drops them in time. */
  private static final int SWEEP_MIN = 16;

  public BulkheadGate(String name, BulkheadConfig config) {
    this.maxWaitNanos = DurationMath.toNanos(config.getMaxWaitDuration());
    this.bulkhead = Bulkhead.of(name, BulkheadConfig.from(config).maxWaitDuration(Duration.ZERO).build());
  }

  public Bulkhead bulkhead() {
    return bulkhead;
  }

  /** A queued attempt. Completed with {@code true} when granted, {@code false} when it gave up. */
  private static final class Waiter extends CompletableFuture<Boolean> {
    volatile ScheduledFuture<?> timeout;
  }

  /**
   * Takes a permit, blocking up to {@code min(maxWait, remainingNanos)}; returns early, without a
   * permit, once the future that {@code wakeUp} supplies completes (the operation was cancelled);
   * it is asked for only when the attempt has to wait.
   *
   * @return false when no permit was taken
   * @throws InterruptedException when interrupted while waiting (no permit is held then)
   */
  public boolean acquire(long remainingNanos, Supplier<? extends Future<?>> wakeUp)
      throws InterruptedException {
    if (waiters.isEmpty() && bulkhead.tryAcquirePermission()) {
      return true;
    }
    long waitNanos = Math.min(maxWaitNanos, remainingNanos);
    if (waitNanos <= 0) {
      return false;
    }
    Waiter waiter = enqueue();
    CompletableFuture<?> wake = wakeUp.get() instanceof CompletableFuture<?> f ? f : null;
    if (wake != null) {
      wake.whenComplete((v, e) -> giveUp(waiter));
    }
    try {
      return waiter.get(waitNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return giveUpOrKeep(waiter);
    } catch (InterruptedException e) {
      if (giveUpOrKeep(waiter)) {
        release(); // granted just as we were interrupted: nobody will use it
      }
      throw e;
    } catch (ExecutionException e) {
      return false; // never completed exceptionally; keep the compiler happy
    }
  }

  /**
   * Takes a free permit now, or none: for a hedge, which is not worth waiting for (a throttled
   * hedge that waits only holds a place in the queue until the deadline). Never overtakes a
   * waiter.
   *
   * @return whether a permit was taken
   */
  public boolean tryAcquire() {
    return waiters.isEmpty() && bulkhead.tryAcquirePermission();
  }

  /**
   * Takes a permit without blocking: the future completes with {@code true} when a permit was taken
   * (possibly later, when another attempt finishes), or {@code false} after
   * {@code min(maxWait, remainingNanos)} without one, or when {@link #giveUp} is called on it. When
   * the scheduler refuses the timeout, the future completes exceptionally with its exception and
   * no permit is held.
   */
  public CompletableFuture<Boolean> acquireAsync(long remainingNanos, ScheduledExecutorService scheduler) {
    if (waiters.isEmpty() && bulkhead.tryAcquirePermission()) {
      return CompletableFuture.completedFuture(true);
    }
    long waitNanos = Math.min(maxWaitNanos, remainingNanos);
    if (waitNanos <= 0) {
      return CompletableFuture.completedFuture(false);
    }
    Waiter waiter = new Waiter();
    try {
      waiter.timeout = scheduler.schedule(() -> giveUp(waiter), waitNanos, TimeUnit.NANOSECONDS);
    } catch (RuntimeException | Error e) { // the user's scheduler: shut down, or a bug
      waiter.completeExceptionally(e);
      return waiter;
    }
    add(waiter);
    // A permit may have been freed between the failed try and the enqueue: look again.
    drain();
    return waiter;
  }

  /**
   * A waiter gives up (timed out, cancelled): it no longer wants a permit. When it was granted one
   * just before, the permit stays granted: its owner sees {@code true} and releases it.
   */
  public void giveUp(CompletableFuture<Boolean> waiting) {
    if (waiting instanceof Waiter waiter && waiter.complete(false)) {
      ScheduledFuture<?> timeout = waiter.timeout;
      if (timeout != null) {
        timeout.cancel(false);
      }
      gaveUpCount.incrementAndGet();
      drain(); // drops it at once when it is the oldest; sweeps when the dead outnumber the live
    }
  }

  /** Gives up, or learns that the permit was granted first: then returns true (permit held). */
  private boolean giveUpOrKeep(Waiter waiter) {
    giveUp(waiter);
    return waiter.join();
  }

  private Waiter enqueue() {
    Waiter waiter = new Waiter();
    add(waiter);
    drain();
    return waiter;
  }

  private void add(Waiter waiter) {
    queuedCount.incrementAndGet();
    waiters.add(waiter);
  }

  /** Removes the head, which the drain (the only remover) has just peeked. */
  private void removeHead() {
    waiters.poll();
    queuedCount.decrementAndGet();
  }

  /** Whether a wait of {@code allowedNanos} was shorter than the bulkhead's own maximum wait. */
  public boolean cutByDeadline(long allowedNanos) {
    return allowedNanos < maxWaitNanos;
  }

  /** Returns the permit of a finished attempt, handing it to the oldest waiter if any. */
  public void release() {
    bulkhead.onComplete();
    if (!waiters.isEmpty()) {
      drain();
    }
  }

  /** Hands free permits to waiters, oldest first, without recursion (see the class comment). */
  private void drain() {
    if (drainRequests.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      Waiter waiter;
      while ((waiter = waiters.peek()) != null) {
        if (waiter.isDone()) {
          removeHead(); // gave up: leaves the queue
          gaveUpCount.decrementAndGet();
          continue;
        }
        if (!bulkhead.tryAcquirePermission()) {
          break;
        }
        removeHead();
        if (waiter.complete(true)) {
          ScheduledFuture<?> timeout = waiter.timeout;
          if (timeout != null) {
            timeout.cancel(false);
          }
        } else {
          gaveUpCount.decrementAndGet();
          bulkhead.releasePermission(); // it gave up meanwhile: the permit goes to the next one
        }
      }
      int gaveUp = gaveUpCount.get();
      if (gaveUp >= SWEEP_MIN && 2 * gaveUp > queuedCount.get()) {
        sweep();
      }
      missed = drainRequests.addAndGet(-missed);
    } while (missed != 0);
  }

  /**
   * Drops every waiter that gave up, in one pass: O(queue), run only when they are at least half
   * of it, so its cost is paid for by the give-ups that made it necessary. Drain thread only.
   */
  private void sweep() {
    int[] removed = {0};
    waiters.removeIf(w -> {
      if (w.isDone()) {
        removed[0]++;
        return true;
      }
      return false;
    });
    queuedCount.addAndGet(-removed[0]);
    gaveUpCount.addAndGet(-removed[0]);
  }

  /**
   * How many waiters are queued (including any that gave up and were not yet removed).
   *
   * @return the queue's length (for tests)
   */
  int queued() {
    return waiters.size();
  }

  public static Duration toDuration(long nanos) {
    return Duration.ofNanos(Math.max(0, nanos));
  }
}
