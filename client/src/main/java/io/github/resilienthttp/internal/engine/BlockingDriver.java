package io.github.resilienthttp.internal.engine;

import java.io.IOException;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The blocking driver of the retry loop: sends one attempt at a time on the calling thread and
 * waits between attempts through the client's {@link io.github.resilienthttp.TimeSource}. The
 * decisions are {@link RetryLoop}'s. How an attempt is sent is the caller's:
 * {@link io.github.resilienthttp.Operation#execute()} makes each attempt its own OkHttp call; a
 * plain call on {@link io.github.resilienthttp.ResilientHttpClient#okHttpClient()} proceeds down
 * its interceptor chain ({@link io.github.resilienthttp.internal.okhttp.RetryInterceptor}). Not
 * API.
 */
public final class BlockingDriver {
  private BlockingDriver() {}

  /** How one attempt is sent. */
  public interface Attempts {
    /**
     * Sends one attempt.
     *
     * @param attempt the attempt (its time left caps its timeouts)
     * @param request the request to send
     * @return the attempt's response
     * @throws IOException the attempt's failure
     */
    Response send(Attempt attempt, Request request) throws IOException;

    /**
     * Whether the last attempt's call was cancelled (by the user, or at the deadline).
     *
     * @return whether the last attempt's call was cancelled
     */
    boolean lastCanceled();
  }

  /**
   * Runs the operation to its end: returns the final response or throws the operation's failure,
   * after reporting the end to listeners and the log. Whatever user code throws on the way (Errors
   * included), every permit is back and a response that is not returned is closed.
   */
  public static Response run(RetryLoop loop, Attempts attempts) throws IOException {
    Response response;
    try {
      response = attemptUntilFinal(loop, attempts);
      if (!loop.claimReturn()) {
        // A cancel came before the response was handed over: the operation ends as cancelled.
        RetryLoop.closeQuietly(response);
        throw loop.canceledFailure();
      }
    } catch (IOException | RuntimeException | Error e) {
      // No body will be read: the deadline's backstop can forget the operation.
      loop.endWithoutResponse();
      try {
        loop.ended(null, e);
      } catch (RuntimeException | Error reportFailure) {
        reportFailure.addSuppressed(e);
        throw reportFailure;
      }
      throw e;
    }
    try {
      response = loop.ended(response, null);
    } catch (RuntimeException | Error e) {
      // A listener's Error (the Listeners shield passes VirtualMachineErrors on): the caller gets it
      // instead of the response, so the response is closed here.
      RetryLoop.closeQuietly(response);
      throw e;
    }
    return response;
  }

  private static Response attemptUntilFinal(RetryLoop loop, Attempts attempts) throws IOException {
    ClientRuntime client = loop.runtime();
    Execution op = loop;
    while (true) {
      Response result;
      try {
        long remaining = Admission.awaitBlocking(loop, loop.beforeAttempt());
        Attempt attempt = loop.startAttempt(remaining);
        Response response = null;
        IOException failure = null;
        try {
          response = attempts.send(attempt, loop.request());
        } catch (IOException e) {
          failure = e;
        }
        result = loop.afterAttempt(response, failure, attempts.lastCanceled());
      } finally {
        loop.releasePermits();
      }
      if (result != null) {
        return result;
      }
      // Registered while it waits, so that a close wakes it; on a closed client it does not wait,
      // and the next beforeAttempt ends the operation.
      if (loop.enterWait()) {
        try {
          // cancel() completes the signal: the wait ends at once and the next beforeAttempt stops.
          client.timeSource().sleep(loop.retryDelay(), op.cancelSignal());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw loop.interrupted();
        } finally {
          loop.exitWait();
        }
      }
    }
  }
}
