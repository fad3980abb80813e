package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.HedgingPolicy;
import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;

/**
 * One run of an operation's attempts: picks the driver (blocking, async or hedging) and is the one
 * target of a cancel for them. The request is stamped with the key once, before the first attempt,
 * so every attempt carries the same key. Not API.
 */
public final class Run {
  private final Execution op;
  private final Request stamped;
  private final HedgingPolicy hedging;
  private volatile Call blockingCall;
  private volatile AsyncDriver async;
  private volatile HedgingDriver hedged;

  /**
   * A run of {@code op}'s attempts for {@code request}.
   *
   * @param op the operation's running state
   * @param request the request as given (stamped here)
   * @param hedging the hedging that applies, or {@code null} (see {@link #hedges})
   */
  public Run(Execution op, Request request, HedgingPolicy hedging) {
    this.op = op;
    this.stamped = op.stamp(request);
    this.hedging = hedging;
  }

  /**
   * Whether {@code policy} hedges {@code request} for an operation whose key is (not) sent: never a
   * body that may be sent only once, which two copies would send at the same time.
   *
   * @return whether the run is hedged
   */
  public static boolean hedges(HedgingPolicy policy, Request request, Execution op) {
    return policy != null && policy.hedges(request.method(), op.spec().keySent())
        && !RetryLoop.sentOnce(request, op.spec().retryPolicy());
  }

  /** Runs to the end on the calling thread; see {@code Operation.execute()}. */
  public Response execute() throws IOException {
    if (hedging != null) {
      return awaitHedged();
    }
    RetryLoop loop = new RetryLoop(op, stamped);
    return BlockingDriver.run(loop, new BlockingDriver.Attempts() {
      private Call last;

      @Override
      public Response send(Attempt attempt, Request request) throws IOException {
        // Each attempt is its own OkHttp call, carrying the attempt as a call tag.
        Call call = op.newAttemptCall(attempt, request);
        last = call;
        blockingCall = call;
        if (op.isCanceled()) {
          call.cancel();
        }
        return call.execute();
      }

      @Override
      public boolean lastCanceled() {
        return last != null && last.isCanceled();
      }
    });
  }

  /** Runs without holding a thread; see {@code Operation.executeAsync()}. */
  public CompletableFuture<Response> executeAsync() {
    if (hedging != null) {
      HedgingDriver h = new HedgingDriver(op, stamped, hedging);
      hedged = h;
      return h.start();
    }
    AsyncDriver a = new AsyncDriver(op, stamped);
    async = a;
    return a.start();
  }

  /**
   * Cancels the run, unless its response was returned: the call in flight, a scheduled retry, a
   * bulkhead wait, every hedged copy.
   */
  public void cancel() {
    if (!op.cancel()) {
      return; // its response was returned: the caller may be reading the body
    }
    Call call = blockingCall;
    if (call != null) {
      call.cancel();
    }
    AsyncDriver a = async;
    if (a != null) {
      a.cancel();
    }
    HedgingDriver h = hedged;
    if (h != null) {
      h.cancel();
    }
  }

  /** A blocking hedged run: the hedging driver runs on OkHttp's threads; this one waits. */
  private Response awaitHedged() throws IOException {
    HedgingDriver h = new HedgingDriver(op, stamped, hedging);
    hedged = h;
    CompletableFuture<Response> future = h.start();
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      // The copies in flight may have reached the server (mayHaveExecuted); a hedged operation is
      // idempotent, so the same key (or method) may be retried safely.
      IOException interrupted = h.interruptedFailure();
      h.cancel();
      throw interrupted;
    } catch (CancellationException e) {
      throw h.canceledFailure();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      } else if (cause instanceof RuntimeException re) {
        throw re;
      } else if (cause instanceof Error err) {
        throw err;
      }
      throw new IOException(cause);
    }
  }
}
