package io.github.resilienthttp.internal.okhttp;

import io.github.resilienthttp.internal.engine.Attempt;
import io.github.resilienthttp.internal.engine.BlockingDriver;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.RetryLoop;
import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Plain OkHttp calls on {@link io.github.resilienthttp.ResilientHttpClient#okHttpClient()} as
 * operations: the first application interceptor of that client makes each call an operation (with
 * the settings of its {@link io.github.resilienthttp.OperationOptions} tag), stamps the operation's
 * idempotency key on the request once, so that every attempt carries the same key, and runs the
 * {@link BlockingDriver} loop with one {@code chain.proceed} per attempt. The user's own
 * interceptors run per attempt, after this one.
 * ({@link io.github.resilienthttp.Operation#execute()} does not come through here: each of its
 * attempts is its own call.)
 *
 * <p>The SDK's clients have OkHttp's {@code retryOnConnectionFailure} off: OkHttp would otherwise
 * silently re-send a request after a failed pooled connection (POST included) and repeat a 408, so
 * one SDK attempt could be several server requests. A pass-through call gets the wrapped client's
 * setting back. {@link NetworkAttemptTracker} counts what really
 * went on the wire and stops OkHttp's last silent repeat (503 with {@code Retry-After: 0}). Not
 * API.
 */
public final class RetryInterceptor implements Interceptor {
  private final ClientRuntime client;
  /** The wrapped client's setting, for pass-through calls (the SDK's client has it off). */
  private final boolean wrappedRetriesOnConnectionFailure;

  public RetryInterceptor(ClientRuntime client, boolean wrappedRetriesOnConnectionFailure) {
    this.client = client;
    this.wrappedRetriesOnConnectionFailure = wrappedRetriesOnConnectionFailure;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    Execution op = chain.call().tag(Execution.TAG);
    if (op == null) {
      // A plain OkHttp call on client.okHttpClient(): it becomes an operation here.
      op = chain.call().tag(Execution.TAG,
          Execution.forPlainCall(client, request).asTag());
    }
    if (op.spec().passThrough()) {
      return (wrappedRetriesOnConnectionFailure ? chain.withRetryOnConnectionFailure(true) : chain)
          .proceed(request);
    }
    // The deadline's backstop watches the plain call as it watches execute()'s attempts, so the
    // deadline bounds a trickled body read after the call returned, and a cancel of the call
    // cancels the operation (see DeadlineWatchdog's listener).
    op.watchPlainCall(chain.call());
    // The key is stamped once, before the first attempt: every attempt carries the same key.
    RetryLoop loop = new RetryLoop(op, op.stamp(request));
    return BlockingDriver.run(loop, new BlockingDriver.Attempts() {
      @Override
      public Response send(Attempt attempt, Request request) throws IOException {
        return AttemptSetupInterceptor.withTimeouts(chain, attempt.remainingNanos(),
            attempt.op().spec().retryPolicy()).proceed(request);
      }

      @Override
      public boolean lastCanceled() {
        return chain.call().isCanceled();
      }
    });
  }
}
