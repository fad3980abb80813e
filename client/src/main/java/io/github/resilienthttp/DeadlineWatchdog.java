package io.github.resilienthttp;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.EventListener;
import okio.AsyncTimeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deadline's backstop for an operation: cancels the operation's OkHttp call (for
 * {@code executeAsync()}, its current attempt's call) once its deadline has passed in real time, for what the per-attempt timeouts cannot bound (a DNS lookup, a
 * trickled upload or response, reading the body after {@code execute()} returned). Not API.
 *
 * <p>It replaces OkHttp's call timeout, which the SDK used to set on every operation. That timeout
 * is an Okio {@code AsyncTimeout}: each call enters a global queue at its head and wakes Okio's
 * watchdog thread, which cost 4 to 7 µs per call on loopback, more than half of the SDK's
 * overhead (see {@code BENCHMARKS.md}). Here an operation only joins a lock-free stack (it is its
 * own list node, so joining allocates nothing); one sweep
 * on the client's scheduler, every {@link #TICK_NANOS} at most while operations are watched,
 * cancels the calls whose deadline has passed and forgets the ones that are done. A sweep is also
 * scheduled for the earliest deadline it saw, so a deadline is enforced on time, not at the next
 * tick; only an operation whose deadline is closer than the next sweep schedules its own. With no
 * operation watched for {@link #IDLE_NANOS}, the sweeps stop.
 *
 * <p>A call is done, and forgotten, when OkHttp reports {@code callEnd} or {@code callFailed}
 * through the {@link #listener()} installed on the SDK's client: after the response body was read
 * or closed. A body that is never closed is forgotten at its deadline, when its call is cancelled.
 * Thread-safe.
 */
final class DeadlineWatchdog {
  private static final Logger log = LoggerFactory.getLogger(DeadlineWatchdog.class);
  /** The longest time between two sweeps while operations are watched: 10 ms. */
  static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  /** Sweeps stop after this long without a watched operation: 1 s. */
  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final ResilientHttpClient client;
  /** Operations that joined since the last sweep, newest first: a lock-free stack. */
  private final AtomicReference<OperationContext> joined = new AtomicReference<>();
  /** The operations the sweeps know, linked through {@code watchNext}; guarded by this. */
  private OperationContext watched;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicBoolean warnedRejected = new AtomicBoolean();
  /** The sweep that reschedules itself while operations are watched. */
  private final Runnable tick = () -> sweep(true);
  /** A one-off sweep for an operation due before the next tick. */
  private final Runnable early = () -> sweep(false);
  private final EventListener listener = new EventListener() {
    @Override
    public void callEnd(Call call) {
      done(call);
    }

    @Override
    public void callFailed(Call call, java.io.IOException ioe) {
      done(call);
    }
  };
  /** The time by which a sweep will run at the latest (System.nanoTime), while running. */
  private volatile long nextSweepNanos;
  private volatile long idleSinceNanos;

  DeadlineWatchdog(ResilientHttpClient client) {
    this.client = client;
  }

  /** The event listener that tells this watchdog when a call is done; stateless, shared. */
  EventListener listener() {
    return listener;
  }

  /**
   * Watches {@code call} for {@code op}'s deadline: the call is cancelled once the deadline has
   * passed, unless OkHttp reported it done first.
   */
  void watch(OperationContext op, Call call) {
    op.watchedCall = call;
    OperationContext head;
    do {
      head = joined.get();
      op.watchNext = head;
    } while (!joined.compareAndSet(head, op));
    if (!running.get() && running.compareAndSet(false, true)) {
      idleSinceNanos = System.nanoTime();
      schedule(tick, 0);
    } else if (op.realDeadlineNanos - nextSweepNanos < 0) {
      // Due before the next tick (a deadline under 10 ms away): not seen in time otherwise.
      schedule(early, op.realDeadlineNanos - System.nanoTime());
    }
  }

  /**
   * The time by which the next sweep runs, while running.
   *
   * @return the time by which the next sweep runs, in {@link System#nanoTime()} (for tests)
   */
  long nextSweepNanos() {
    return nextSweepNanos;
  }

  /**
   * Whether sweeps are scheduled.
   *
   * @return whether sweeps are scheduled (for tests)
   */
  boolean isRunning() {
    return running.get();
  }

  /**
   * How many operations are watched now.
   *
   * @return the number of watched operations (for tests)
   */
  synchronized int watchedCount() {
    int n = 0;
    for (OperationContext op = joined.get(); op != null; op = op.watchNext) {
      n++;
    }
    for (OperationContext op = watched; op != null; op = op.watchNext) {
      n++;
    }
    return n;
  }

  /**
   * OkHttp reports a call ended. Only the operation's current call counts, and only once the
   * operation has ended too ({@link OperationContext#callDone()}): an empty body ends its call before
   * {@code execute()} returns, and an async operation's earlier attempts end while it goes on.
   */
  private void done(Call call) {
    OperationContext op = call.tag(OperationContext.class);
    if (op != null && op.watchedCall == call) {
      op.watchedCallEnded = true;
    }
  }

  /**
   * Cancels the watched calls that are due and forgets the ones that are done. A tick then
   * schedules the next one: at the earliest deadline seen, and within {@link #TICK_NANOS}.
   */
  private synchronized void sweep(boolean isTick) {
    long now = System.nanoTime();
    if (isTick) {
      // Set before the scan: an operation the scan misses is due after this time (see watch).
      nextSweepNanos = now + TICK_NANOS;
    }
    for (OperationContext op = joined.getAndSet(null); op != null; ) {
      OperationContext next = op.watchNext;
      op.watchNext = watched;
      watched = op;
      op = next;
    }
    long earliest = now + TICK_NANOS;
    OperationContext previous = null;
    for (OperationContext op = watched; op != null; ) {
      OperationContext next = op.watchNext;
      boolean due = op.realDeadlineNanos - now <= 0;
      boolean done = op.callDone();
      if (done || due) {
        if (previous == null) {
          watched = next;
        } else {
          previous.watchNext = next;
        }
        op.watchNext = null;
        if (!done) {
          expire(op);
        }
      } else {
        if (op.realDeadlineNanos - earliest < 0) {
          earliest = op.realDeadlineNanos;
        }
        previous = op;
      }
      op = next;
    }
    if (!isTick) {
      return;
    }
    if (watched != null || joined.get() != null) {
      idleSinceNanos = now;
    } else if (now - idleSinceNanos >= IDLE_NANOS) {
      running.set(false);
      // An operation that joined after the check above, but saw running still true, is swept by
      // whoever wins this race: this sweep, or the next watch() call.
      if (joined.get() == null || !running.compareAndSet(false, true)) {
        return;
      }
    }
    schedule(tick, earliest - System.nanoTime());
  }

  /**
   * Times the call out the way OkHttp's own call timeout does, so that the caller sees the same
   * failure: the call's {@link AsyncTimeout} (which OkHttp consults when the call ends) is entered
   * with a deadline of now, Okio's watchdog cancels the call at once, and OkHttp reports
   * {@code InterruptedIOException("timeout")}, both from {@code execute()} (which the SDK turns into
   * {@link DeadlineExceededException}) and from reading the body afterwards. Entered only here, at
   * the deadline, so a call that ends in time never touches Okio's timeout queue. If OkHttp's call
   * timeout is not an {@code AsyncTimeout}, the call is simply cancelled.
   */
  private static void expire(OperationContext op) {
    Call call = op.watchedCall;
    try {
      if (!enterTimeout(call)) {
        call.cancel();
      }
    } catch (RuntimeException e) {
      // Cancelling runs the user's EventListener.canceled: a bug there must not stop the sweeps.
      log.warn("cancelling a call at its deadline failed", e);
    }
  }

  /** Enters the call's own timeout with a deadline of now; false when that is not possible. */
  private static boolean enterTimeout(Call call) {
    if (!(call.timeout() instanceof AsyncTimeout timeout)) {
      return false;
    }
    try {
      timeout.deadlineNanoTime(System.nanoTime());
      timeout.enter();
      return true;
    } catch (IllegalStateException e) {
      // Already entered: cannot happen for the SDK's calls, whose call timeout is off.
      return false;
    }
  }

  private void schedule(Runnable sweep, long delayNanos) {
    try {
      client.scheduler().schedule(sweep, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The user's scheduler was shut down: the per-attempt timeouts still bound every attempt.
      if (sweep == tick) {
        running.set(false);
      }
      if (!warnedRejected.getAndSet(true)) {
        // Once per client: every later operation would be refused the same way.
        log.warn("the scheduler refused the deadline sweep; deadlines are enforced per attempt"
            + " only (not for reading bodies or trickled transfers) until it accepts tasks", e);
      }
    }
  }
}
