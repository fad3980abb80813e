package io.github.resilienthttp.internal.engine;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A scheduled wait that exactly one party ends: the timer, when it fires, or whoever cuts it short.
 * Not API.
 *
 * <p>Why not {@code ScheduledFuture.cancel(false)} alone: it also returns {@code true} while the
 * task is running (a {@code FutureTask} stays {@code NEW} until its task returns), so a caller that
 * took {@code true} for "the task will never run" and ran the next step itself would run it twice,
 * concurrently with the timer's. Here the timer's task and {@link #cutShort()} both claim the wait
 * with one compare-and-set first, and only the winner goes on. Thread-safe.
 */
final class ScheduledWait {
  private final AtomicBoolean claimed = new AtomicBoolean();
  /** Set once {@code schedule} returned; read only by {@link #cutShort()}. */
  private volatile ScheduledFuture<?> timer;

  private ScheduledWait() {}

  /**
   * Runs {@code task} after {@code delayNanos} on {@code scheduler}, unless the wait is cut short
   * first.
   *
   * @param scheduler the scheduler
   * @param task what runs when the wait ends by itself
   * @param delayNanos the wait, in nanoseconds (0 or less: as soon as the scheduler can)
   * @return the wait
   * @throws java.util.concurrent.RejectedExecutionException when the scheduler refuses the timer
   */
  static ScheduledWait schedule(ScheduledExecutorService scheduler, Runnable task,
      long delayNanos) {
    ScheduledWait wait = new ScheduledWait();
    wait.timer = scheduler.schedule(() -> {
      if (wait.claimed.compareAndSet(false, true)) {
        task.run();
      }
    }, delayNanos, TimeUnit.NANOSECONDS);
    return wait;
  }

  /**
   * Ends the wait now, unless the timer already did: its task will then never run, and the
   * timer's queue entry is cancelled.
   *
   * @return {@code true} when this call ended the wait (the caller carries out what the task would
   *     have); {@code false} when the timer's task ran or is running, or the wait was cut short
   *     before
   */
  boolean cutShort() {
    if (!claimed.compareAndSet(false, true)) {
      return false;
    }
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    return true;
  }
}
