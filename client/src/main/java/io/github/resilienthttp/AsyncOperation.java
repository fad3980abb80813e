package io.github.resilienthttp;

import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The non-blocking driver of the retry loop for {@link Operation#executeAsync()}: each attempt is an
 * OkHttp call made with {@link Call#enqueue}, each wait a task on the client's scheduler, so no
 * thread is held while the operation waits. The decisions are {@link RetryLoop}'s, so the semantics
 * are those of {@code execute()}.
 *
 * <p>Steps run one after the other (an attempt's callback schedules the next step), never
 * concurrently, so the loop needs no lock. Not API.
 */
final class AsyncOperation {
  private final OperationContext op;
  private final ResilientHttpClient client;
  private final RetryLoop loop;
  private final OperationFuture future = new OperationFuture();
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile Call call;
  private volatile ScheduledFuture<?> scheduled;

  AsyncOperation(OperationContext op, Request stampedRequest) {
    this.op = op;
    this.client = op.client;
    this.loop = new RetryLoop(op, stampedRequest);
  }

  CompletableFuture<Response> start() {
    step();
    return future;
  }

  /** Cancels the in-flight call and any scheduled retry; the future completes as cancelled. */
  void cancel() {
    op.cancel();
    // The future first: cancelling the call wakes the attempt's callback, which would otherwise
    // race to end the operation with a "canceled" failure instead of a cancelled future.
    if (future.cancelFromOperation() && ended.compareAndSet(false, true)) {
      loop.ended(null, new CancellationException("operation canceled"));
    }
    Call c = call;
    if (c != null) {
      c.cancel();
    }
    ScheduledFuture<?> s = scheduled;
    if (s != null) {
      s.cancel(false);
    }
    // The breaker permission of an in-flight attempt is released by its callback, which OkHttp
    // always calls, also after a cancel.
  }

  private void step() {
    if (future.isDone()) {
      return;
    }
    long remaining;
    try {
      remaining = loop.beforeAttempt();
    } catch (IOException | RuntimeException e) {
      fail(e);
      return;
    }
    BulkheadGate bulkhead = client.bulkheadGate();
    if (bulkhead == null) {
      send(remaining, null);
      return;
    }
    long waitStart = System.nanoTime();
    long allowed = RetryLoop.bulkheadWaitNanos(remaining);
    bulkhead.acquireAsync(allowed, client.scheduler()).whenComplete((admitted, error) -> {
      if (error != null || !Boolean.TRUE.equals(admitted)) {
        fail(loop.bulkheadRejected(System.nanoTime() - waitStart, bulkhead.cutByDeadline(allowed)));
      } else if (future.isDone()) {
        bulkhead.release();
        loop.releaseBreakerPermission();
      } else {
        send(op.remainingNanos(), bulkhead);
      }
    });
  }

  private void send(long remaining, BulkheadGate heldPermit) {
    Request attempt = loop.startAttempt(remaining);
    // Watched for the deadline, which also bounds reading the final response's body.
    Call c = op.newAttemptCall(attempt, remaining);
    call = c;
    if (op.isCanceled()) {
      c.cancel();
    }
    c.enqueue(new Callback() {
      @Override
      public void onFailure(Call failed, IOException e) {
        attemptDone(null, e, failed.isCanceled(), heldPermit);
      }

      @Override
      public void onResponse(Call done, Response response) {
        attemptDone(response, null, done.isCanceled(), heldPermit);
      }
    });
  }

  private void attemptDone(Response response, IOException failure, boolean canceled,
      BulkheadGate heldPermit) {
    Response result;
    try {
      result = loop.afterAttempt(response, failure, canceled);
    } catch (IOException | RuntimeException e) {
      fail(e, Runnable::run);
      return;
    } catch (Error e) {
      // The future must still complete, or its caller waits for ever.
      fail(e, Runnable::run);
      throw e;
    } finally {
      loop.releaseBreakerPermission();
      if (heldPermit != null) {
        heldPermit.release();
      }
    }
    if (result != null) {
      // Already on OkHttp's callback thread: complete here, as OkHttp's own Callback would.
      succeed(result, Runnable::run);
      return;
    }
    try {
      scheduled = client.scheduler().schedule(this::step, loop.retryDelay().toNanos(),
          TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      fail(new ResilientHttpException("the scheduler rejected the retry", op.key(), op.keySent,
          op.attempts(), "scheduler-rejected", null), Runnable::run);
      return;
    }
    if (future.isDone()) {
      scheduled.cancel(false);
    }
  }

  private void succeed(Response response, Executor executor) {
    if (!ended.compareAndSet(false, true)) {
      RetryLoop.closeQuietly(response);
      return;
    }
    loop.ended(response, null);
    completeOn(executor, () -> {
      if (!future.complete(response)) {
        RetryLoop.closeQuietly(response);
      }
    });
  }

  /**
   * Fails the operation. Steps that run on the scheduler's thread (rejections before an attempt)
   * hand the completion to OkHttp's dispatcher executor, so that dependent stages never run on the
   * scheduler's single thread.
   */
  private void fail(Throwable e) {
    fail(e, callbackExecutor());
  }

  private void fail(Throwable e, Executor executor) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    loop.ended(null, e);
    // No body will be read: the deadline's backstop can forget the operation.
    op.endedWithoutResponse = true;
    completeOn(executor, () -> future.completeExceptionally(e));
  }

  private Executor callbackExecutor() {
    return client.wrappedClient().dispatcher().executorService();
  }

  /** Completes on OkHttp's callback threads, never on the scheduler's thread. */
  private static void completeOn(Executor executor, Runnable completion) {
    try {
      executor.execute(completion);
    } catch (RejectedExecutionException e) {
      completion.run();
    }
  }

  /** A future whose cancellation cancels the operation. */
  private final class OperationFuture extends CompletableFuture<Response> {
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean canceled = super.cancel(mayInterruptIfRunning);
      if (canceled) {
        AsyncOperation.this.cancel();
      }
      return canceled;
    }

    boolean cancelFromOperation() {
      return super.cancel(false) || isCancelled();
    }
  }
}
