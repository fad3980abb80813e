package io.github.resilienthttp.internal.deadline;

import io.github.resilienthttp.internal.engine.Execution;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiConsumer;
import okhttp3.Call;
import okhttp3.EventListener;
import okio.AsyncTimeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deadline's backstop for operations: once an operation's deadline has passed in real time,
 * stops its current OkHttp call, for what the per-attempt timeouts cannot bound (a trickled upload
 * or response, a call waiting in OkHttp's dispatcher queue, reading the body after the operation
 * returned). Not API.
 *
 * <p>It stands in for OkHttp's call timeout on the SDK's calls, which would put every call into
 * Okio's global timeout queue and wake its watchdog thread (the cost that this class avoids:
 * docs/design/deadline-watchdog.md). Here an operation only joins a lock-free stack (it is its own
 * list node, so joining allocates nothing). The stack is striped, as {@link
 * java.util.concurrent.atomic.LongAdder} stripes a counter: a caller joins the stack its thread
 * picks, each stack on a cache line of its own, so callers on different cores do not write one
 * shared line per operation. One sweep, at most every {@link #TICK_NANOS} while
 * operations are watched and also at the earliest deadline it knows of, stops the calls whose
 * deadline has passed and forgets the operations that are done. The sweeps run on Okio's own
 * watchdog thread through one {@code AsyncTimeout} per client that is re-armed after each sweep:
 * about 100 entries in Okio's queue per second while busy, whatever the traffic, and none when
 * idle. So no thread is added, and the client's scheduler (which may be the user's, and busy) plays
 * no part. Only an operation due before the next sweep arms a timer of its own. With no operation
 * watched for {@link #IDLE_NANOS}, the sweeps stop.
 *
 * <p>How a call is stopped depends on where the operation is:
 * <ul>
 *   <li>While it runs (an attempt in flight, or waiting in OkHttp's dispatcher queue), the call is
 *       cancelled; the retry loop sees a cancelled call after the deadline and throws
 *       {@link io.github.resilienthttp.DeadlineExceededException}.
 *   <li>Once it returned a response, the caller may be reading the body: the call's own timeout is
 *       entered with a deadline of now, so OkHttp fails the read exactly as its call timeout would,
 *       with {@code InterruptedIOException("timeout")}. (Entering it earlier is not possible:
 *       OkHttp enters a call's timeout itself when the call starts, and Okio refuses a second
 *       entry.)
 * </ul>
 *
 * <p>An operation is done, and forgotten, when it ended without a response, or when it returned one
 * and OkHttp reported its last call ended ({@code callEnd} or {@code callFailed}, through the
 * {@link #listener()} installed first on the SDK's attempt clients): after the body was read or
 * closed. A body that is never closed is forgotten at its deadline, when its call is stopped.
 * A done operation is forgotten by the next sweep, or sooner by the next caller joining its stack
 * while it is still the head: that caller's operation takes its place with the same one
 * compare-and-set. A thread's blocking operations follow one another on the thread's stack, so
 * each usually takes the place of the one before: the sweep never visits them, and an operation
 * is garbage once the next one has joined rather than kept until the next sweep.
 * Thread-safe.
 */
public final class DeadlineWatchdog {
  private static final Logger log = LoggerFactory.getLogger(DeadlineWatchdog.class);
  /** The longest time between two sweeps while operations are watched: 10 ms. */
  static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  /** Sweeps stop after this long without a watched operation: 1 s. */
  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * Slots between two stacks' heads in {@link #joined}: 16 references are 64 bytes or more, a cache
   * line on the usual CPUs, so no two heads share one.
   */
  private static final int PAD = 16;
  /** Upper bound on the stripes: a sweep reads every stack's head. */
  public static final int MAX_STRIPES = 64;

  /**
   * Operations that joined since the last sweep, newest first: lock-free stacks, one per stripe,
   * whose heads are at {@code (stripe + 1) * PAD} (the slots between them are never used).
   */
  private final AtomicReferenceArray<Execution> joined;
  /** The number of stripes minus one (a power of two minus one). */
  private final int stripeMask;
  /** The operations the sweeps know, linked through {@code watchNext}; guarded by this. */
  private Execution watched;
  /** Whether the tick timer is armed (or a sweep that will re-arm it is running). */
  private final AtomicBoolean running = new AtomicBoolean();
  /** The timer of the regular sweeps; armed only by whoever set {@link #running}, or a tick. */
  private final AsyncTimeout tickTimer = new SweepTimer(true);
  /** Timers armed for operations due before the next tick (for tests). */
  private final AtomicInteger earlyTimers = new AtomicInteger();
  private final EventListener listener = new EventListener() {
    @Override
    public void canceled(Call call) {
      callCanceled(call);
    }

    @Override
    public void callEnd(Call call) {
      callEnded(call);
    }

    @Override
    public void callFailed(Call call, IOException ioe) {
      callEnded(call);
    }
  };
  /** The time by which the next tick runs at the latest (System.nanoTime), while running. */
  private volatile long nextSweepNanos;
  private volatile long idleSinceNanos;
  /** See {@link #beforeIdleStopForTests}; null but in tests. */
  private volatile Runnable beforeIdleStop;
  /** Run between reading a done head and replacing it (tests only: null otherwise). */
  private final BiConsumer<Execution, Execution> beforeReplace;

  /**
   * A watchdog with {@link #MAX_STRIPES} stripes, whatever the number of processors: what a stripe
   * saves depends on how many caller threads share it, not on the cores. A thread alone on its
   * stripe finds its own previous, done operation at the head and takes its place, so the sweep
   * never visits it and no other core's cache line is read or written; two threads on one stripe
   * push onto each other's operations in flight, and the sweep then walks the pile. 64 stripes cost
   * about 4 KiB per client and 64 reads per sweep.
   */
  public DeadlineWatchdog() {
    this(MAX_STRIPES);
  }

  /**
   * A watchdog whose joining operations are spread over {@code stripes} stacks (rounded up to a
   * power of two, from 1 to {@link #MAX_STRIPES}).
   *
   * @param stripes how many stacks joining callers spread over; 1 is one shared stack
   */
  public DeadlineWatchdog(int stripes) {
    this(stripes, null);
  }

  /**
   * As {@link #DeadlineWatchdog(int)}, running {@code beforeReplace} when a joining caller found a
   * done operation at its stack's head and is about to put its own in that place: with the done
   * operation and the one below it (null for none), before the compare-and-set (for tests: a sweep
   * can be made to take the stack there).
   *
   * @param stripes how many stacks joining callers spread over; 1 is one shared stack
   * @param beforeReplace what to run, or null for nothing
   */
  public DeadlineWatchdog(int stripes, BiConsumer<Execution, Execution> beforeReplace) {
    this.beforeReplace = beforeReplace;
    int n = Integer.highestOneBit(Math.max(1, Math.min(MAX_STRIPES, stripes)) * 2 - 1);
    stripeMask = n - 1;
    joined = new AtomicReferenceArray<>((n + 2) * PAD);
  }

  /**
   * The stripe a thread joins: picked by its ID, which is fixed for the thread's life, so one
   * caller thread always writes the same stack.
   *
   * @param thread a thread
   * @return the stripe, from 0 to the number of stripes minus one (for tests)
   */
  @SuppressWarnings("deprecation") // Thread.threadId() is Java 19+; getId() is the same number
  public int stripeOf(Thread thread) {
    return (int) thread.getId() & stripeMask;
  }

  /**
   * The number of stripes.
   *
   * @return the number of stripes, a power of two (for tests)
   */
  public int stripes() {
    return stripeMask + 1;
  }

  /**
   * Runs {@code hook} in a sweep that found nothing to watch for {@link #IDLE_NANOS}, just before
   * it stops the sweeps (for tests: an operation joins then, while the sweeps still look running).
   * The hook runs on Okio's watchdog thread.
   *
   * @param hook what to run, or null for nothing
   */
  public void beforeIdleStopForTests(Runnable hook) {
    beforeIdleStop = hook;
  }

  private static int head(int stripe) {
    return (stripe + 1) * PAD;
  }

  /** Whether an operation joined since the last sweep, on any stripe. */
  private boolean anyJoined() {
    for (int i = 0; i <= stripeMask; i++) {
      if (joined.get(head(i)) != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * The event listener that tells this watchdog when a call ended or was cancelled; stateless,
   * shared. The SDK's clients report these through their one listener (which calls
   * {@link #callEnded} and {@link #callCanceled}); this one is for a client of its own.
   */
  public EventListener listener() {
    return listener;
  }

  /**
   * A call was cancelled ({@code EventListener.canceled}): a plain call cancelled by its caller
   * stops its operation too, and a backoff or bulkhead wait inside it wakes at once.
   */
  public void callCanceled(Call call) {
    Execution op = call.tag(Execution.TAG);
    if (op != null && op.plainCall() == call) {
      op.cancel();
    }
  }

  /**
   * Watches {@code op}, through its current {@link Execution#watchedCall()}, for its deadline.
   * Called by {@link Execution#newAttemptCall} and {@link Execution#watchPlainCall} when the
   * watchdog does not have the operation; later attempts only update
   * {@link Execution#watchedCall()}. An operation that has ended ({@link Execution#hasEnded()})
   * never joins: a caller may take a done operation off a stack's head (below), which is sound only
   * if that operation can never be pushed again. An attempt started after its operation ended is a
   * bug of a driver or a user interceptor that proceeds twice; it is logged and goes unwatched
   * rather than risk a stack.
   */
  public void watch(Execution op) {
    if (op.hasEnded()) {
      log.warn("an attempt started after its operation ended: not watched for the deadline");
      return;
    }
    WatchEntry.joining(op);
    int slot = head(stripeOf(Thread.currentThread()));
    while (true) {
      Execution head = joined.get(slot);
      if (head != null && head.callDone()) {
        // The stack's newest operation is done (usually this thread's previous one): the new one
        // takes its place, and this caller forgets it as a sweep would. Only the head changes,
        // so what lies below it is fixed while it is the head; a sweep or another caller that took
        // it first makes the compare-and-set fail, and the head cannot be it again by then: a done
        // operation has ended, and an ended one never joins again (above; hasEnded() stays true,
        // callDone() does not once forgotten).
        Execution below = WatchEntry.next(head);
        WatchEntry.link(op, below);
        if (beforeReplace != null) {
          beforeReplace.accept(head, below);
        }
        if (joined.compareAndSet(slot, head, op)) {
          // Its link stays, so that a snapshot walking the stack from it goes on to the rest; it
          // keeps the operation below alive only while the forgotten one is itself reachable.
          WatchEntry.forget(head);
          head.forgotten();
          break;
        }
      } else {
        WatchEntry.link(op, head);
        if (joined.compareAndSet(slot, head, op)) {
          break;
        }
      }
    }
    if (!running.get() && running.compareAndSet(false, true)) {
      long now = System.nanoTime();
      idleSinceNanos = now;
      armTickAt(now);
    } else if (op.realDeadlineNanos() - nextSweepNanos < 0) {
      // Due before the next tick (a deadline under 10 ms away): not seen in time otherwise.
      earlyTimers.incrementAndGet();
      AsyncTimeout early = new SweepTimer(false);
      early.deadlineNanoTime(op.realDeadlineNanos());
      early.enter();
    }
  }

  /**
   * The time by which the next tick runs, while running.
   *
   * @return the time by which the next tick runs, in {@link System#nanoTime()} (for tests)
   */
  public long nextSweepNanos() {
    return nextSweepNanos;
  }

  /**
   * How many timers were armed for operations due before the next tick.
   *
   * @return how many timers were armed for operations due before the next tick (for tests)
   */
  public int earlyTimers() {
    return earlyTimers.get();
  }

  /**
   * Whether sweeps are scheduled.
   *
   * @return whether sweeps are scheduled (for tests)
   */
  public boolean isRunning() {
    return running.get();
  }

  /**
   * Every operation watched now (an attempt in flight, or a response whose body is not read yet),
   * for {@code closeNow()}: a snapshot, taken under the sweep's lock so that no link moves while it
   * is read.
   *
   * @return the operations, in no order
   */
  public synchronized List<Execution> watchedOperations() {
    List<Execution> ops = new ArrayList<>();
    for (int i = 0; i <= stripeMask; i++) {
      for (Execution op = joined.get(head(i)); op != null; op = WatchEntry.next(op)) {
        ops.add(op);
      }
    }
    for (Execution op = watched; op != null; op = WatchEntry.next(op)) {
      ops.add(op);
    }
    return ops;
  }

  /**
   * How many operations are watched now.
   *
   * @return the number of watched operations (for tests)
   */
  public synchronized int watchedCount() {
    int n = 0;
    for (int i = 0; i <= stripeMask; i++) {
      for (Execution op = joined.get(head(i)); op != null; op = WatchEntry.next(op)) {
        n++;
      }
    }
    for (Execution op = watched; op != null; op = WatchEntry.next(op)) {
      n++;
    }
    return n;
  }

  /**
   * OkHttp reports a call ended. Only the operation's current call counts, and the operation is
   * done only once it has ended too ({@link Execution#callDone()}): an empty body ends its
   * call before {@code execute()} returns, and an async operation's earlier attempts end while it
   * goes on.
   */
  public void callEnded(Call call) {
    Execution op = Execution.of(call);
    if (op != null) {
      op.watchedCallEnded(call);
    }
  }

  /**
   * Arms the tick timer to fire at {@code atNanos} ({@link System#nanoTime()}; a time already
   * past fires at once); only the owner of the tick calls this.
   */
  private void armTickAt(long atNanos) {
    tickTimer.exit(); // back to idle after it fired (a no-op the first time)
    tickTimer.deadlineNanoTime(atNanos);
    tickTimer.enter();
  }

  /**
   * When the tick timer was last armed to fire: its deadline, read under the sweep's lock, so that
   * an arming by a sweep that has ended is seen.
   *
   * @return the time, in {@link System#nanoTime()}; 0 before the first tick was armed (for tests)
   */
  public synchronized long armedTickNanos() {
    return tickTimer.hasDeadline() ? tickTimer.deadlineNanoTime() : 0;
  }

  /**
   * Stops the watched calls that are due and forgets the operations that are done. A tick then
   * re-arms itself: at the earliest deadline seen, and within {@link #TICK_NANOS}.
   */
  private synchronized void sweep(boolean isTick) {
    long now = System.nanoTime();
    if (isTick) {
      // Set before the scan: an operation the scan misses is due after this time (see watch).
      nextSweepNanos = now + TICK_NANOS;
    }
    for (int i = 0; i <= stripeMask; i++) {
      // Read first: a stripe no caller used since the last sweep is not written (its line stays
      // shared in the callers' caches).
      if (joined.get(head(i)) == null) {
        continue;
      }
      for (Execution op = joined.getAndSet(head(i), null); op != null; ) {
        Execution next = WatchEntry.next(op);
        WatchEntry.link(op, watched);
        watched = op;
        op = next;
      }
    }
    long earliest = now + TICK_NANOS;
    Execution previous = null;
    for (Execution op = watched; op != null; ) {
      Execution next = WatchEntry.next(op);
      boolean done = op.callDone();
      if (done || op.realDeadlineNanos() - now <= 0) {
        if (previous == null) {
          watched = next;
        } else {
          WatchEntry.link(previous, next);
        }
        WatchEntry.link(op, null);
        WatchEntry.watched(op, false); // after unlinking: watch() may link it again from now on
        if (done) {
          op.forgotten();
        } else {
          expire(op);
        }
      } else {
        if (op.realDeadlineNanos() - earliest < 0) {
          earliest = op.realDeadlineNanos();
        }
        previous = op;
      }
      op = next;
    }
    if (!isTick) {
      return;
    }
    if (watched != null || anyJoined()) {
      idleSinceNanos = now;
    } else if (now - idleSinceNanos >= IDLE_NANOS) {
      Runnable hook = beforeIdleStop;
      if (hook != null) {
        hook.run();
      }
      running.set(false);
      // An operation that joined after the check above, but saw running still true, is swept by
      // whoever wins this race: this sweep, or the next watch() call. (Each stripe is read after
      // running was cleared, and a joining caller reads running after its push: one of the two
      // sees the other, on every stripe.)
      if (!anyJoined() || !running.compareAndSet(false, true)) {
        return;
      }
    }
    armTickAt(earliest);
  }

  /** Stops the call of an operation whose deadline has passed (see the class comment). */
  private static void expire(Execution op) {
    Call call = op.watchedCall();
    if (call == null) {
      return;
    }
    try {
      if (!op.isEnded() || !enterTimeout(call)) {
        call.cancel();
      }
    } catch (Throwable e) { // NOPMD: user code on Okio's watchdog thread, see SweepTimer
      // Cancelling runs the user's EventListener.canceled. Whatever it throws, Errors included,
      // must not end Okio's watchdog thread: every OkHttp timeout in the JVM depends on it.
      log.error("stopping a call at its deadline: the call's EventListener threw; ignored", e);
    }
  }

  /**
   * Enters the call's own timeout with a deadline of now. Only for a call that has returned its
   * response: OkHttp entered (or skipped, having no call timeout) the timeout when the call
   * started.
   *
   * @return false when the call's timeout is not an {@link AsyncTimeout} or is already entered
   */
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

  /**
   * A sweep on Okio's watchdog thread. That thread times out every OkHttp socket in the JVM, so a
   * sweep must be short and must never let an exception escape: it would end the thread.
   */
  private final class SweepTimer extends AsyncTimeout {
    private final boolean isTick;

    SweepTimer(boolean isTick) {
      this.isTick = isTick;
    }

    @Override
    protected void timedOut() {
      try {
        sweep(isTick);
      } catch (Throwable e) { // NOPMD: an escaping Throwable would end Okio's watchdog thread
        // The thread times out every OkHttp socket in the JVM: keep it alive, whatever happened.
        log.error("deadline sweep failed; sweeping again in 10 ms", e);
        if (isTick) {
          armTickAt(System.nanoTime() + TICK_NANOS);
        }
      }
    }
  }
}
