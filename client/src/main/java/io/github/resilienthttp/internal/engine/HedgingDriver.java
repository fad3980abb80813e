package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.Decision;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The driver of a hedged operation ({@link HedgingPolicy}): the first attempt as usual; when it has
 * not answered within the hedging delay, a copy (a hedge), and so on up to the policy's copies and
 * the retry policy's attempts. The first acceptable answer wins: the other attempts are cancelled
 * and their responses closed as they arrive. A non-fatal answer (retryable) starts the next copy at
 * once, except a 409 on a keyed request, which means "the other copy is in progress": then the SDK
 * waits for that copy. Each hedge takes its own budget token, breaker permission and bulkhead
 * permit, without waiting ({@link RetryLoop#reserveHedge()}); a refusal means no new copy, never
 * the end of the copies in flight (failsafe-go #141). One deadline timer bounds all of them.
 *
 * <p>Attempts run as OkHttp async calls; {@code execute()} waits for the future. Every step runs
 * under this driver's lock, so the loop sees one attempt's answer at a time; what escapes a step
 * (a bug in user code) ends the operation with every permit back. Not API.
 */
public final class HedgingDriver implements Callback {
  private final Execution op;
  private final ClientRuntime client;
  private final RetryLoop loop;
  private final HedgingPolicy policy;
  private final int maxCopies;
  private final String target;
  private final OperationFuture future = new OperationFuture(this::cancel);
  /** Guarded by this. */
  private final List<Attempt> inFlight = new ArrayList<>(2);
  private boolean ended;
  /** What the run ended with, when it ended without a response. */
  private Throwable endFailure;
  private boolean started;
  private int copies;
  private ScheduledFuture<?> hedgeTimer;
  private ScheduledFuture<?> deadlineTimer;
  private Admission bulkheadWait;
  /** Why the last {@link RetryLoop#reserveHedge} refused a copy; guarded by this. */
  private String hedgeRefusal;
  /** The attempt whose answer won, once one did. */
  private Attempt winner;

  public HedgingDriver(RetryLoop loop, HedgingPolicy policy) {
    this.op = loop;
    this.client = loop.runtime();
    this.loop = loop;
    this.policy = policy;
    this.maxCopies = Math.min(1 + policy.maxHedges(), loop.retryPolicy().maxAttempts());
    this.target = TargetCircuitBreakers.targetName(loop.request().url());
  }

  /** Starts the operation; never throws: every failure completes the future. */
  public CompletableFuture<Response> start() {
    synchronized (this) {
      started = true;
      guarded(this::first);
    }
    return future;
  }

  /**
   * What a blocking caller gets when interrupted: whether a copy in flight may have been processed
   * is known only before {@link #cancel()} drops them.
   */
  synchronized IOException interruptedFailure() {
    return loop.interruptedInFlight(inFlight);
  }

  /** What a blocking caller gets for a cancelled run: the cancel's own failure once it ended. */
  synchronized IOException canceledFailure() {
    return endFailure instanceof ResilientHttpException e && "canceled".equals(e.reason())
        ? e : loop.canceledFailure(inFlight);
  }

  /** The attempt whose answer won, or {@code null}. */
  public synchronized Attempt winner() {
    return winner;
  }

  /** Cancels every attempt and timer; the future completes as cancelled. */
  public void cancel() {
    stop(false);
  }

  /**
   * Cancels; {@code forClose}: the client's {@code closeNow()}, after which the operation fails
   * with the close's failure (reason {@code client-closed}) instead of completing as cancelled.
   */
  void stop(boolean forClose) {
    if (!op.cancel()) {
      return; // its response was returned: the caller may be reading the body
    }
    if (!forClose) {
      future.cancelFromOperation(); // at once, as for any cancelled future; the end is reported below
    }
    synchronized (this) {
      // Before start() the first step sees the cancel and ends the operation itself, after
      // reporting its start.
      if (started && !ended) {
        end(null, loop.canceledFailure(inFlight));
      }
    }
  }

  private void first() {
    long remaining;
    try {
      remaining = loop.beforeAttempt();
    } catch (IOException e) {
      end(null, e);
      return;
    }
    armDeadline(remaining);
    Admission admission = Admission.begin(loop, remaining);
    if (admission == null) {
      sendFirst(remaining);
      return;
    }
    if (admission.isDone()) {
      admitted(admission);
      return;
    }
    bulkheadWait = admission;
    admission.whenDone(() -> {
      synchronized (this) {
        guarded(() -> admitted(admission));
      }
    });
  }

  private void admitted(Admission admission) {
    bulkheadWait = null;
    boolean granted;
    try {
      granted = admission.granted();
    } catch (IOException e) {
      end(null, e);
      return;
    }
    if (ended) {
      loop.releasePermits();
      return;
    }
    if (!granted) {
      end(null, admission.refusal());
      return;
    }
    sendFirst(op.remainingNanos());
  }

  private void sendFirst(long remaining) {
    Attempt a = loop.startAttempt(remaining);
    send(a);
  }

  private void send(Attempt a) {
    // The hedging delay of a copy runs from when it is on the wire, not from when it was handed to
    // OkHttp's dispatcher, which may queue it (maxRequests, maxRequestsPerHost): time in that queue
    // is not the server's slowness.
    a.onWire(() -> {
      synchronized (this) {
        guarded(() -> armHedgeTimer(a));
      }
    });
    try {
      Call c = op.newAttemptCall(a, loop.request());
      // OkHttp runs the wrapped client's EventListener.callStart inside enqueue: if it throws, no
      // callback comes, so this copy's own permits go back here (not another copy's).
      c.enqueue(this);
    } catch (RuntimeException | Error e) {
      a.permits().releaseAll();
      throw e;
    }
    copies++;
    inFlight.add(a);
  }

  /** Schedules the next copy after the hedging delay, once {@code onWire} is on the wire. */
  private void armHedgeTimer(Attempt onWire) {
    if (ended || copies >= maxCopies || inFlight.isEmpty()
        || inFlight.get(inFlight.size() - 1) != onWire) {
      return; // only the latest copy's clock counts
    }
    cancelTimer(hedgeTimer);
    long delay = hedgingDelayNanos();
    try {
      hedgeTimer = client.scheduler().schedule(() -> {
        synchronized (this) {
          guarded(this::hedgeAfterDelay);
        }
      }, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // No scheduler, no hedges: the copies in flight go on.
      hedgeTimer = null;
    }
  }

  private long hedgingDelayNanos() {
    if (policy.delay().isPresent()) {
      return DurationMath.toNanos(policy.delay().get());
    }
    long p = client.latencies().percentile(target, policy.percentile(), HedgingPolicy.MIN_SAMPLES);
    long min = DurationMath.toNanos(policy.minDelay());
    long max = DurationMath.toNanos(policy.maxDelay());
    return p < 0 ? max : Math.max(min, Math.min(max, p));
  }

  private void hedgeAfterDelay() {
    hedgeTimer = null;
    if (ended || copies >= maxCopies || inFlight.isEmpty()) {
      return;
    }
    if (dispatcherWouldQueue()) {
      refuseQueuedHedge();
      return;
    }
    Attempt permits = loop.reserveHedge(this);
    if (permits != null) {
      send(loop.startHedge(permits));
    }
  }

  /**
   * Whether OkHttp's dispatcher would queue a copy rather than run it now (its
   * {@code maxRequests} or {@code maxRequestsPerHost} reached): a queued copy would only compete
   * with the copy it is meant to help, so no copy is sent then. The count includes the SDK's
   * blocking calls too, so it errs towards not hedging.
   */
  private boolean dispatcherWouldQueue() {
    okhttp3.Dispatcher d = client.wrapped().dispatcher();
    if (d.runningCallsCount() >= d.getMaxRequests()) {
      return true;
    }
    String host = loop.request().url().host();
    int sameHost = 0;
    for (Call c : d.runningCalls()) {
      if (c.request().url().host().equals(host)) {
        sameHost++;
      }
    }
    return sameHost >= d.getMaxRequestsPerHost();
  }

  private void refuseQueuedHedge() {
    client.warnDispatcherQueue();
  }

  private void armDeadline(long remainingNanos) {
    try {
      deadlineTimer = client.scheduler().schedule(() -> {
        synchronized (this) {
          guarded(() -> {
            if (!ended) {
              end(null, loop.deadlineInFlight(inFlight));
            }
          });
        }
      }, remainingNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      deadlineTimer = null; // each attempt's timeouts still end at the deadline
    }
  }

  @Override
  public void onFailure(Call call, IOException e) {
    answered(call, null, e);
  }

  @Override
  public void onResponse(Call call, Response response) {
    answered(call, response, null);
  }

  private void answered(Call call, Response response, IOException failure) {
    Attempt a = call.tag(Attempt.TAG);
    synchronized (this) {
      inFlight.remove(a);
      if (ended) {
        // A loser: cancelled after another won (or the operation ended). Its answer is dropped.
        RetryLoop.closeQuietly(response);
        a.permits().releaseAll();
        return;
      }
      try {
        judge(a, response, failure, call.isCanceled());
      } catch (RuntimeException | Error e) {
        RetryLoop.closeQuietly(response);
        a.permits().releaseAll();
        end(null, e);
        if (e instanceof VirtualMachineError) {
          throw e;
        }
      }
    }
  }

  private void judge(Attempt a, Response response, IOException failure, boolean canceled) {
    loop.focus(a);
    Decision decision;
    try {
      decision = loop.judgeHedged(response, failure, canceled);
    } catch (IOException e) {
      end(null, e);
      return;
    }
    if (response != null) {
      client.latencies().record(target, elapsedSinceStart(a));
    }
    boolean othersInFlight = !inFlight.isEmpty();
    Attempt next = null;
    if (loop.nonFatal(decision)) {
      boolean otherInProgress = othersInFlight && response != null && response.code() == 409
          && op.keySent();
      if (copies < maxCopies && !otherInProgress) {
        next = loop.reserveHedge(this); // non-fatal: the next copy starts at once
      }
    }
    String giveUp = null;
    if (!othersInFlight && next == null) {
      giveUp = copies >= maxCopies ? "attempts-exhausted" : hedgeRefusal;
    }
    Response result;
    try {
      result = loop.concludeHedged(decision, response, failure, giveUp);
    } catch (IOException e) {
      releaseReserved(next);
      end(null, e);
      return;
    }
    if (result != null) {
      releaseReserved(next);
      winner = a;
      op.watchWinner(a); // the deadline bounds reading the winner's body, not a loser's
      end(result, null);
      return;
    }
    if (next != null) {
      cancelTimer(hedgeTimer);
      send(loop.startHedge(next));
    }
    // Otherwise another copy is in flight: its answer decides.
  }

  /** {@link RetryLoop#reserveHedge} refused a copy, for {@code why}. */
  void refused(String why) {
    hedgeRefusal = why;
  }

  private void releaseReserved(Attempt reserved) {
    if (reserved != null) {
      reserved.releaseAll();
      client.retryBudget().refundRetry();
    }
  }

  /**
   * Ends the operation with {@code response} or {@code failure}: cancels the other attempts and the
   * timers, reports the end once, completes the future. Called under the lock.
   */
  private void end(Response response, Throwable failure) {
    if (ended) {
      RetryLoop.closeQuietly(response);
      return;
    }
    if (response != null && !op.claimReturn()) {
      // A cancel came before the response was handed over: the operation ends as cancelled.
      RetryLoop.closeQuietly(response);
      response = null;
      failure = loop.canceledFailure();
      winner = null;
    }
    ended = true;
    endFailure = failure;
    cancelTimer(hedgeTimer);
    cancelTimer(deadlineTimer);
    Admission wait = bulkheadWait;
    if (wait != null) {
      wait.giveUp();
    }
    if (copies == 0) {
      loop.releasePermits(); // the first attempt's, taken but never sent
    }
    long now = client.timeSource().nanoTime();
    long winnerLatency = winner == null ? Long.MAX_VALUE : now - startNanos(winner);
    for (Attempt other : inFlight) {
      long waited = now - startNanos(other);
      if (waited > winnerLatency && other.onWireYet()) {
        // A slow loser, cancelled after this long without an answer: its latency is at least that.
        // Left out, the percentile would learn only from the fast copies and drift low, hedging
        // more and more (a censored sample, counted at its lower bound).
        client.latencies().record(target, waited);
      }
      Call c = other.call();
      if (c != null) {
        try {
          c.cancel(); // its answer arrives as a loser: closed, permits released
        } catch (RuntimeException e) {
          // The wrapped client's EventListener.canceled threw: the call is cancelled anyway.
        }
      }
    }
    if (response == null) {
      op.endWithoutResponse();
    }
    try {
      response = loop.ended(response, failure, winner);
    } finally {
      complete(response, failure);
    }
  }

  private void complete(Response response, Throwable failure) {
    Executor executor = client.wrapped().dispatcher().executorService();
    Runnable completion = () -> {
      if (failure == null) {
        if (!future.completeFromOperation(response)) {
          RetryLoop.closeQuietly(response);
        }
      } else if (op.isCanceled() && !op.realDeadlinePassed() && !client.lifecycle().isClosed()) {
        future.cancelFromOperation();
      } else {
        future.failFromOperation(failure);
      }
    };
    try {
      executor.execute(completion);
    } catch (RejectedExecutionException e) {
      // The dispatcher is shut down: complete here, but never on the SDK's scheduler thread.
      if (ClientRuntime.onSdkScheduler()) {
        java.util.concurrent.ForkJoinPool.commonPool().execute(completion);
      } else {
        completion.run();
      }
    }
  }

  private long startNanos(Attempt a) {
    return op.deadlineNanos() - a.remainingNanos();
  }

  private long elapsedSinceStart(Attempt a) {
    return client.timeSource().nanoTime() - startNanos(a);
  }

  private static void cancelTimer(ScheduledFuture<?> timer) {
    if (timer != null) {
      timer.cancel(false);
    }
  }

  /** Runs a step under the lock; what escapes it ends the operation, every permit back. */
  private void guarded(Runnable step) {
    try {
      step.run();
    } catch (RuntimeException | Error e) {
      if (copies == 0) {
        loop.releasePermits(); // the first copy's, never sent; sent copies release on their answer
      }
      end(null, e);
      if (e instanceof VirtualMachineError) {
        throw e;
      }
    }
  }
}
