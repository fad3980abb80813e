package io.github.resilienthttp.internal.engine;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The non-blocking driver of the retry loop for {@link
 * io.github.resilienthttp.Operation#executeAsync()}: each attempt is an
 * OkHttp call made with {@link Call#enqueue}, each wait a task on the client's scheduler or a
 * bulkhead grant, so no thread is held while the operation waits. The decisions are
 * {@link RetryLoop}'s, so the semantics are those of {@code execute()}.
 *
 * <p>Steps run one after the other (an attempt's callback schedules the next step), never
 * concurrently, so the loop needs no lock. Every entry point (the first step, a bulkhead grant, an
 * OkHttp callback, a scheduled retry) runs inside a guard: whatever user code throws on the way
 * (Errors included), the attempt's permits are released and the future completes. Only the step
 * that owns the operation reports its end: {@link #cancel()} completes the future as cancelled at
 * once and wakes what the operation waits for (the call, the scheduled retry, the bulkhead grant);
 * the step that wakes reports {@code operationEnded}, once, last. Not API.
 */
public final class AsyncDriver implements Callback {
  private final Execution op;
  private final ClientRuntime client;
  private final RetryLoop loop;
  private final OperationFuture future = new OperationFuture(this::cancel);
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile Call call;
  private volatile ScheduledWait scheduled;
  private volatile Admission bulkheadWait;
  /** The scheduler's thread while it runs a step of this operation, else {@code null}. */
  private volatile Thread schedulerStep;
  /** Whether the operation is registered with the client's lifecycle for a wait now. */
  private volatile boolean waitRegistered;
  /** Completion on the calling thread: an OkHttp callback thread, or the caller of enqueue. */
  private static final Executor DIRECT = Runnable::run;

  public AsyncDriver(RetryLoop loop) {
    this.op = loop;
    this.client = loop.runtime();
    this.loop = loop;
  }

  /** Starts the operation; never throws: every failure completes the future. */
  public CompletableFuture<Response> start() {
    guarded(this::step, callbackExecutor());
    return future;
  }

  /**
   * Cancels the operation: the future completes as cancelled now; the in-flight call is cancelled,
   * a scheduled retry or a bulkhead wait is cut short, and the step that wakes ends the operation.
   */
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
      future.cancelFromOperation();
    }
    try {
      Call c = call;
      if (c != null) {
        c.cancel(); // its callback ends the operation
      }
    } finally {
      wake();
    }
  }

  /**
   * Cuts a scheduled retry or a bulkhead wait short; the step that wakes sees why (a cancel, the
   * client closed) and ends the operation. The call in flight is left alone.
   */
  void wake() {
    ScheduledWait s = scheduled;
    if (s != null && s.cutShort()) {
      // The retry will never run: its step runs here, sees the cancel and ends the operation.
      // (A retry already running claimed the wait: it sees the cancel itself.)
      guarded(this::step, callbackExecutor());
    }
    Admission w = bulkheadWait;
    if (w != null) {
      w.giveUp(); // its continuation ends the operation
    }
  }

  private void step() {
    endWait();
    if (ended.get()) {
      return;
    }
    long remaining;
    try {
      remaining = loop.beforeAttempt();
    } catch (IOException e) {
      fail(e, callbackExecutor());
      return;
    }
    Admission admission = Admission.begin(loop, remaining);
    if (admission == null) {
      send(remaining);
      return;
    }
    if (admission.isDone()) {
      admitted(admission);
      return;
    }
    bulkheadWait = admission;
    // Registered while it waits, so that a close wakes it (ClientLifecycle).
    if (op.isCanceled() || !beginWait()) {
      admission.giveUp();
    }
    admission.whenDone(() -> guarded(() -> admitted(admission), callbackExecutor()));
  }

  /** The bulkhead wait is over: granted, timed out, given up (cancel), or the scheduler refused. */
  private void admitted(Admission admission) {
    bulkheadWait = null;
    endWait();
    try {
      if (!admission.granted()) {
        throw admission.refusal();
      }
      loop.checkNotCanceled();
    } catch (IOException e) {
      fail(e, callbackExecutor());
      return;
    }
    send(op.remainingNanos());
  }

  private void send(long remaining) {
    Attempt attempt = loop.startAttempt(remaining);
    // Watched for the deadline, which also bounds reading the final response's body.
    Call c = op.newAttemptCall(attempt, loop.request());
    call = c;
    // After the call is set (and watched): a cancel or a closeNow() either saw it or is seen here.
    if (op.isCanceled() || client.lifecycle().isClosedNow()) {
      c.cancel();
    }
    // OkHttp runs the wrapped client's EventListener.callStart inside enqueue: if it throws, no
    // callback will come, and the guard around this step ends the operation.
    c.enqueue(this);
  }

  @Override
  public void onFailure(Call failed, IOException e) {
    guarded(() -> attemptDone(null, e, failed.isCanceled()), DIRECT);
  }

  @Override
  public void onResponse(Call done, Response response) {
    try {
      attemptDone(response, null, done.isCanceled());
    } catch (RuntimeException | Error e) {
      RetryLoop.closeQuietly(response); // not returned (or returned and then failed): closed
      crash(e, DIRECT);
      if (e instanceof VirtualMachineError) {
        throw e;
      }
    }
  }

  private void attemptDone(Response response, IOException failure, boolean canceled) {
    Response result;
    try {
      result = loop.afterAttempt(response, failure, canceled);
    } catch (IOException e) {
      fail(e, DIRECT);
      return;
    }
    if (result != null) {
      // Already on OkHttp's callback thread: complete here, as OkHttp's own Callback would.
      succeed(result);
      return;
    }
    // Registered while the retry waits, so that a close wakes it (ClientLifecycle); on a closed
    // client it does not wait: the step's check ends the operation.
    if (!beginWait()) {
      step();
      return;
    }
    ScheduledWait s;
    try {
      s = ScheduledWait.schedule(client.scheduler(), this::scheduledStep,
          DurationMath.toNanos(loop.retryDelay()));
    } catch (RejectedExecutionException e) {
      endWait();
      if (client.lifecycle().isClosed()) {
        fail(loop.canceledFailure(), DIRECT); // the close shut the scheduler down: say why
        return;
      }
      fail(loop.schedulerRejected("the retry", e), DIRECT);
      return;
    }
    scheduled = s;
    if ((op.isCanceled() || client.lifecycle().isClosed()) && s.cutShort()) {
      step(); // cancelled (or the client closed) while the retry was being scheduled: end here
    }
  }

  /** Registers the operation for a wait; see {@link RetryLoop#enterWait()}. */
  private boolean beginWait() {
    if (!loop.enterWait()) {
      return false;
    }
    waitRegistered = true;
    return true;
  }

  /** The wait is over (or never began): unregisters the operation, once. */
  private void endWait() {
    if (waitRegistered) {
      waitRegistered = false;
      loop.exitWait();
    }
  }

  /** A retry's step, on the scheduler's thread (the default one or the user's). */
  private void scheduledStep() {
    schedulerStep = Thread.currentThread();
    try {
      guarded(this::step, callbackExecutor());
    } finally {
      schedulerStep = null;
    }
  }

  /**
   * Runs a step. What escapes it is a bug, in user code or the SDK's: the attempt's permits are
   * released and the future fails with it. A {@link VirtualMachineError} is passed on afterwards,
   * to the thread's own handling.
   */
  private void guarded(Runnable step, Executor completion) {
    try {
      step.run();
    } catch (RuntimeException | Error e) {
      crash(e, completion);
      if (e instanceof VirtualMachineError) {
        throw e;
      }
    }
  }

  private void crash(Throwable e, Executor completion) {
    try {
      loop.releasePermits();
    } finally {
      fail(e, completion);
    }
  }

  private void succeed(Response response) {
    if (!op.claimReturn()) {
      // A cancel came before the response was handed over: the operation ends as cancelled.
      RetryLoop.closeQuietly(response);
      fail(loop.canceledFailure(), DIRECT);
      return;
    }
    if (!ended.compareAndSet(false, true)) {
      RetryLoop.closeQuietly(response);
      return;
    }
    try {
      response = loop.ended(response, null);
    } catch (RuntimeException | Error e) {
      // A listener's Error passed on by the Listeners shield: the caller gets it, not the response.
      RetryLoop.closeQuietly(response);
      future.failFromOperation(e);
      throw e;
    }
    if (!future.completeFromOperation(response)) {
      RetryLoop.closeQuietly(response); // cancelled or completed by the caller meanwhile
    }
  }

  /**
   * Fails the operation. Steps that run on the scheduler's thread (rejections before an attempt)
   * hand the completion to OkHttp's dispatcher executor, so that dependent stages never run on the
   * scheduler's single thread.
   */
  private void fail(Throwable e, Executor executor) {
    loop.releasePermits();
    endWait();
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    // No body will be read: the deadline's backstop can forget the operation.
    op.endWithoutResponse();
    try {
      loop.ended(null, e);
    } finally {
      completeOn(executor, () -> {
        if (op.isCanceled() && !client.lifecycle().isClosed()) {
          future.cancelFromOperation();
        } else {
          future.failFromOperation(e);
        }
      });
    }
  }

  private Executor callbackExecutor() {
    return client.wrapped().dispatcher().executorService();
  }

  /**
   * Completes on OkHttp's callback threads, never on the scheduler's thread. A shut-down dispatcher
   * rejects the completion: it then runs here, unless here is a scheduler step (a retry that found
   * the dispatcher shut down), which hands it to {@link ForkJoinPool#commonPool()}, the JDK's
   * default for asynchronous completions.
   */
  private void completeOn(Executor executor, Runnable completion) {
    boolean onScheduler = schedulerStep == Thread.currentThread() || ClientRuntime.onSdkScheduler();
    Executor target = executor;
    if (onScheduler && target == DIRECT) {
      target = callbackExecutor();
    }
    try {
      target.execute(completion);
    } catch (RejectedExecutionException e) {
      if (onScheduler) {
        ForkJoinPool.commonPool().execute(completion);
      } else {
        completion.run();
      }
    }
  }
}
