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
  private final Runnable task;
  /** Set once armed; written before {@link #claimed} is read in arm, read after it in cutShort. */
  private volatile ScheduledFuture<?> timer;

  private ScheduledWait(Runnable task) {
    this.task = task;
  }

  /**
   * A wait for {@code task}, not armed yet: it can be published (and cut short) before its timer
   * exists, for a caller whose own step must be findable before a zero-delay timer can fire.
   *
   * @param task what runs when the wait ends by itself
   * @return the wait
   */
  static ScheduledWait of(Runnable task) {
    return new ScheduledWait(task);
  }

  /**
   * Runs {@code task} after {@code delayNanos} on {@code scheduler}, unless the wait is cut short
   * first: {@link #of} and {@link #arm} in one.
   *
   * @param scheduler the scheduler
   * @param task what runs when the wait ends by itself
   * @param delayNanos the wait, in nanoseconds (0 or less: as soon as the scheduler can)
   * @return the wait
   * @throws java.util.concurrent.RejectedExecutionException when the scheduler refuses the timer
   */
  static ScheduledWait schedule(ScheduledExecutorService scheduler, Runnable task,
      long delayNanos) {
    ScheduledWait wait = of(task);
    wait.arm(scheduler, delayNanos);
    return wait;
  }

  /**
   * Arms the timer: the task runs after {@code delayNanos} unless the wait is cut short first.
   * Arms nothing when it was cut short already, and cancels the timer when it is cut short while
   * being armed. Once only.
   *
   * @param scheduler the scheduler
   * @param delayNanos the wait, in nanoseconds (0 or less: as soon as the scheduler can)
   * @throws java.util.concurrent.RejectedExecutionException when the scheduler refuses the timer
   */
  void arm(ScheduledExecutorService scheduler, long delayNanos) {
    if (claimed.get()) {
      return;
    }
    ScheduledFuture<?> t = scheduler.schedule(() -> {
      if (claimed.compareAndSet(false, true)) {
        task.run();
      }
    }, delayNanos, TimeUnit.NANOSECONDS);
    timer = t;
    // Read after the write above, as cutShort writes the claim before it reads the timer: a cut
    // that did not see this timer is seen here, and its queue entry goes now rather than when due.
    if (claimed.get()) {
      t.cancel(false);
    }
  }

  /**
   * Ends the wait now, unless the timer already did: its task will then never run, and the
   * timer's queue entry, if armed, is cancelled.
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
