package io.github.resilienthttp.internal.engine;

import static io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;

import io.github.resilienthttp.ConcurrencyLimitExceededException;
import io.github.resilienthttp.ThrottledException;
import io.github.resilienthttp.internal.guard.AdaptiveLimiter;
import io.github.resilienthttp.internal.guard.AdaptiveThrottle;
import io.github.resilienthttp.internal.guard.BulkheadGate;
import io.github.resilienthttp.internal.guard.RatePacing;
import io.github.resilienthttp.internal.guard.TargetOverload;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import okhttp3.Response;

/**
 * One attempt's admission, the same for the three drivers, after {@link RetryLoop#beforeAttempt()}
 * (deadline, breaker) and before {@link RetryLoop#startAttempt}, in this order:
 *
 * <ol>
 *   <li>the target's rate-limit pause ({@link RatePacing}), when pacing is on: a wait, or the
 *       deadline's failure at once when the pause outlasts the deadline;
 *   <li>the bulkhead's permit: a wait up to the deadline's floor; a refusal is the bulkhead's, or
 *       the deadline's when the wait was cut by it, or the cancel's;
 *   <li>the target's adaptive concurrency limit ({@link AdaptiveLimiter}): a permit or a refusal,
 *       never a wait;
 *   <li>the target's adaptive throttle ({@link AdaptiveThrottle}): send or refuse.
 * </ol>
 *
 * <p>The waits come first, so that no limit permit is held (nor its latency measured) while the
 * attempt waits, and the throttle comes last, so that each request it counts is one that is sent.
 * Every permit taken becomes the attempt's to release ({@link AttemptPermits}). The blocking driver
 * waits on its thread ({@link #awaitBlocking}); the async and hedging drivers get a grant
 * ({@link #begin}) and continue when it completes (no thread held: the pause is a task on the
 * client's scheduler). Not API.
 */
final class Admission {
  private final RetryLoop loop;
  private final BulkheadGate gate;
  private final long waitStart = System.nanoTime();
  private volatile long allowedNanos;
  private final CompletableFuture<Boolean> grant;
  /** The pause's timer, while it runs. */
  private volatile ScheduledWait pauseTimer;
  /** The bulkhead's pending grant, once the pause (if any) is over. */
  private volatile CompletableFuture<Boolean> bulkheadGrant;
  /**
   * Set by {@link #giveUp()} before it reads {@link #bulkheadGrant}; read by {@link #bulkhead}
   * after it wrote it: a give-up (a close, the deadline, a cancel) while the pause's timer is
   * asking the bulkhead is seen by one of the two.
   */
  private volatile boolean givenUp;
  /** A refusal decided before any wait (the pause outlasts the deadline). */
  private IOException early;

  private Admission(RetryLoop loop, BulkheadGate gate, long remainingNanos, long pauseNanos) {
    this.loop = loop;
    this.gate = gate;
    if (pauseNanos <= 0) {
      this.grant = gate == null ? CompletableFuture.completedFuture(true)
          : bulkhead(remainingNanos);
      return;
    }
    if (pauseNanos > remainingNanos - MIN_ATTEMPT_NANOS) {
      this.early = pauseBeyondDeadline(loop, pauseNanos);
      this.grant = CompletableFuture.completedFuture(false);
      return;
    }
    reportPause(loop, pauseNanos);
    CompletableFuture<Boolean> paused = new CompletableFuture<>();
    try {
      pauseTimer = ScheduledWait.schedule(loop.runtime().scheduler(), () -> paused.complete(true),
          pauseNanos);
    } catch (RejectedExecutionException e) {
      paused.completeExceptionally(e);
    }
    this.grant = gate == null ? paused : paused.thenCompose(
        ok -> ok ? bulkhead(loop.remainingNanos()) : CompletableFuture.completedFuture(false));
  }

  private CompletableFuture<Boolean> bulkhead(long remainingNanos) {
    allowedNanos = RetryLoop.bulkheadWaitNanos(remainingNanos);
    CompletableFuture<Boolean> g = gate.acquireAsync(allowedNanos, loop.runtime().scheduler());
    bulkheadGrant = g;
    if (givenUp || loop.isCanceled()) {
      gate.giveUp(g);
    }
    return g;
  }

  /**
   * Asks for admission without holding a thread.
   *
   * @param remainingNanos the time left before the deadline
   * @return the pending admission, or {@code null} when the client has no bulkhead and no
   *     overload option (the attempt is admitted)
   */
  static Admission begin(RetryLoop loop, long remainingNanos) {
    BulkheadGate gate = loop.runtime().bulkheadGate();
    TargetOverload.Target t = loop.overloadTarget();
    if (gate == null && t == null) {
      return null;
    }
    return new Admission(loop, gate, remainingNanos, pauseNanos(t));
  }

  /**
   * Admits the attempt on the calling thread: waits for the pause and the bulkhead (a cancel wakes
   * either), then takes the limit's permit and asks the throttle.
   *
   * @return the time left before the deadline after the waits
   * @throws IOException the refusal, the deadline, the cancel, or the interrupt (its flag set
   *     again)
   */
  static long awaitBlocking(RetryLoop loop, long remainingNanos) throws IOException {
    TargetOverload.Target t = loop.overloadTarget();
    long pause = pauseNanos(t);
    if (pause > 0) {
      if (pause > remainingNanos - MIN_ATTEMPT_NANOS) {
        throw pauseBeyondDeadline(loop, pause);
      }
      reportPause(loop, pause);
      // Registered while it waits, so that a close wakes it (see ClientLifecycle).
      if (loop.enterWait()) {
        try {
          loop.runtime().timeSource().sleep(Duration.ofNanos(pause), loop.cancelSignal());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw loop.interrupted();
        } finally {
          loop.exitWait();
        }
      }
      loop.checkNotCanceled();
      remainingNanos = loop.remainingNanos();
    }
    BulkheadGate gate = loop.runtime().bulkheadGate();
    // A free permit is taken at once: no clock reading, no registration.
    if (gate != null && !loop.permits().tryAcquireBulkhead()) {
      remainingNanos = awaitBulkhead(loop, gate, remainingNanos);
    }
    limitAndThrottle(loop, t);
    return remainingNanos;
  }

  /** Waits for a bulkhead permit, registered with the client's lifecycle while it waits. */
  private static long awaitBulkhead(RetryLoop loop, BulkheadGate gate, long remainingNanos)
      throws IOException {
    long waitStart = System.nanoTime();
    long allowed = RetryLoop.bulkheadWaitNanos(remainingNanos);
    boolean admitted = false;
    if (loop.enterWait()) {
      try {
        admitted = loop.permits().acquireBulkhead(allowed, loop::cancelSignal);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw loop.interrupted();
      } finally {
        loop.exitWait();
      }
    }
    if (!admitted) {
      throw loop.bulkheadRejected(System.nanoTime() - waitStart, gate.cutByDeadline(allowed));
    }
    loop.checkNotCanceled();
    return loop.remainingNanos();
  }

  boolean isDone() {
    return grant.isDone();
  }

  /** Runs {@code next} when the wait is over (granted, timed out, given up, or refused). */
  void whenDone(Runnable next) {
    grant.whenComplete((granted, error) -> next.run());
  }

  /** Gives the wait up (a cancel, the deadline): it completes as not granted. */
  void giveUp() {
    givenUp = true;
    ScheduledWait timer = pauseTimer;
    if (timer != null && timer.cutShort()) {
      // The pause will never end by itself: not granted (with a bulkhead, grant is the composed
      // stage, and the bulkhead is never asked).
      grant.complete(false);
    }
    CompletableFuture<Boolean> g = bulkheadGrant;
    if (g != null) {
      gate.giveUp(g);
    }
  }

  /**
   * After the wait: whether the attempt is admitted; a granted bulkhead permit is the attempt's from
   * now on, and the limit and the throttle are asked.
   *
   * @return whether the waits were granted ({@link #refusal()} says why not)
   * @throws IOException when the user's scheduler refused a wait's timer, or the limit or the
   *     throttle refused the attempt
   */
  boolean granted() throws IOException {
    boolean granted;
    try {
      granted = grant.join();
    } catch (RuntimeException e) { // CompletionException: the user's scheduler refused the timeout
      throw loop.schedulerRejected("the admission wait's timer", e.getCause());
    }
    if (!granted) {
      return false;
    }
    if (gate != null) {
      loop.permits().bulkheadGranted();
    }
    loop.checkNotCanceled();
    limitAndThrottle(loop, loop.overloadTarget());
    return true;
  }

  /** The failure of a wait that was not granted. */
  IOException refusal() {
    if (loop.isCanceled() || loop.runtime().lifecycle().isClosed()) {
      return loop.canceledFailure(); // the close's failure when the client closed
    }
    if (early != null) {
      return early;
    }
    if (gate == null) {
      // Only the rate-limit pause was waited for, and it was given up: by the deadline.
      return loop.deadlineExceeded("deadline passed during a rate-limit pause", loop.lastFailure());
    }
    return loop.bulkheadRejected(System.nanoTime() - waitStart, gate.cutByDeadline(allowedNanos));
  }

  // ---- the overload steps ----

  private static long pauseNanos(TargetOverload.Target t) {
    RatePacing pacing = t == null ? null : t.pacing();
    return pacing == null ? 0 : pacing.waitNanos();
  }

  private static IOException pauseBeyondDeadline(RetryLoop loop, long pauseNanos) {
    return loop.deadlineExceeded("the target's rate-limit quota resets in "
        + TimeUnit.NANOSECONDS.toMillis(pauseNanos) + " ms, after the deadline", loop.lastFailure());
  }

  private static void reportPause(RetryLoop loop, long pauseNanos) {
    int next = loop.attempts() + 1;
    Duration wait = Duration.ofNanos(pauseNanos);
    loop.runtime().listeners().send("paced", l -> l.paced(loop.info(), next, wait));
  }

  /** The limit's permit, then the throttle's decision; a refusal is thrown, nothing sent. */
  private static void limitAndThrottle(RetryLoop loop, TargetOverload.Target t) throws IOException {
    if (t == null) {
      return;
    }
    Execution op = loop;
    int next = op.attempts() + 1;
    AdaptiveLimiter limiter = t.limiter();
    if (limiter != null && !loop.permits().tryAcquireLimit(limiter)) {
      loop.runtime().listeners().send("limited", l -> l.limited(op.info(), next));
      throw loop.rejectedBeforeSend(new ConcurrencyLimitExceededException(op.key(),
          op.keySent(), next - 1, t.name(), limiter.limit(), loop.lastFailure()));
    }
    AdaptiveThrottle throttle = t.throttle();
    if (throttle != null && !throttle.tryAcquire()) {
      loop.runtime().listeners().send("throttled", l -> l.throttled(op.info(), next));
      throw loop.rejectedBeforeSend(new ThrottledException(op.key(), op.keySent(), next - 1,
          t.name(), throttle.rejectProbability(), loop.lastFailure()));
    }
  }

  /**
   * A hedge's limit permit and throttle decision, without waiting (a hedge never waits for a
   * pause either: it is not sent while one lasts).
   *
   * @return {@code null} when the hedge may start, else why not
   */
  static String reserveHedge(RetryLoop loop, AttemptPermits hedge) {
    TargetOverload.Target t = loop.overloadTarget();
    if (t == null) {
      return null;
    }
    int next = loop.attempts() + 1;
    if (pauseNanos(t) > 0) {
      return "rate-limit-pause";
    }
    AdaptiveLimiter limiter = t.limiter();
    if (limiter != null && !hedge.tryAcquireLimit(limiter)) {
      loop.runtime().listeners().send("limited", l -> l.limited(loop.info(), next));
      return ConcurrencyLimitExceededException.REASON;
    }
    AdaptiveThrottle throttle = t.throttle();
    if (throttle != null && !throttle.tryAcquire()) {
      loop.runtime().listeners().send("throttled", l -> l.throttled(loop.info(), next));
      return ThrottledException.REASON;
    }
    return null;
  }

  /**
   * What an attempt's answer tells the overload state: an accept or not for the throttle, a
   * sample, a drop or nothing for the limit, and a rate-limit pause. Called once per judged attempt
   * that left the client.
   *
   * @return whether the answer is a 503 that the target's adaptive throttle or limit takes as load
   *     shed, so that the breaker does not also record it as a failure
   */
  static boolean recordAnswer(RetryLoop loop, AttemptPermits permits, Response response,
      IOException failure) {
    TargetOverload.Target t = loop.overloadTarget();
    if (t == null) {
      return false;
    }
    boolean refused = response == null || response.code() == 429 || response.code() == 503;
    if (!refused && t.throttle() != null) {
      t.throttle().onAccepted();
    }
    if (!refused) {
      permits.recordLoad(AttemptPermits.Load.SUCCESS);
    } else if (response != null || failure instanceof InterruptedIOException
        || failure instanceof ConnectException) {
      permits.recordLoad(AttemptPermits.Load.DROPPED);
    } else {
      permits.recordLoad(AttemptPermits.Load.IGNORED);
    }
    if (response != null && t.pacing() != null) {
      t.pacing().observe(response.headers());
    }
    // A 503 is the server shedding load: with an adaptive control on the target, that control
    // answers it (fewer requests sent, a lower limit). The breaker does not hear it too: opening
    // it would refuse every request for its whole open period, far more than the load to shed
    // (BENCHMARKS.md, "Overload": the breaker's cycles cut goodput to a quarter of capacity).
    return response != null && response.code() == 503
        && (t.throttle() != null || t.limiter() != null);
  }

  /**
   * The wait before a retry, at least until the target's rate-limit pause is over, so that the
   * retry rules (deadline, {@code Retry-After}) judge the whole wait: a pause beyond the deadline
   * returns the last answer as the deadline does.
   */
  static Duration pacedRetryDelay(RetryLoop loop, Duration delay) {
    long pause = pauseNanos(loop.overloadTarget());
    return pause > DurationMath.toNanos(delay) ? Duration.ofNanos(pause) : delay;
  }
}
