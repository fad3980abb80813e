package io.github.resilienthttp.internal.okhttp;

import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.internal.engine.Attempt;
import io.github.resilienthttp.internal.engine.BlockingDriver;
import io.github.resilienthttp.internal.engine.ClientLifecycle;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.Run;
import java.io.IOException;
import okhttp3.Call;
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
    Execution tagged = chain.call().tag(Execution.TAG);
    // A plain OkHttp call on client.okHttpClient(): it becomes an operation here.
    Run op = tagged instanceof Run run ? run
        : (Run) chain.call().tag(Execution.TAG, Run.forPlainCall(client, request).asTag());
    // A closed client sends nothing new. A running call hears the close while it waits (it
    // registers then), or through the deadline watchdog, which watches its call (ClientLifecycle).
    if (client.lifecycle().isClosed()) {
      throw new ResilientHttpException("client closed: no new calls (nothing was sent)",
          op.key(), op.keySent(), 0, ClientLifecycle.REASON, ClientLifecycle.closedError());
    }
    return proceed(chain, op);
  }

  /**
   * A call that opted out of the SDK: sent as the wrapped client would, neither retried nor
   * watched for a deadline. It is registered with the client's lifecycle while it runs, since the
   * watchdog does not know its call: closeNow() cancels it, as any plain call in flight.
   */
  private Response passThrough(Chain chain, Run op) throws IOException {
    Call call = chain.call();
    ClientLifecycle lifecycle = client.lifecycle();
    ClientLifecycle.Stoppable closing = now -> {
      if (now) {
        call.cancel();
      }
    };
    if (!lifecycle.enterWait(closing)) {
      throw new ResilientHttpException("client closed: no new calls (nothing was sent)",
          op.key(), op.keySent(), 0, ClientLifecycle.REASON, ClientLifecycle.closedError());
    }
    try {
      return (wrappedRetriesOnConnectionFailure ? chain.withRetryOnConnectionFailure(true) : chain)
          .proceed(op.request());
    } finally {
      lifecycle.exit(closing);
    }
  }

  private Response proceed(Chain chain, Run op) throws IOException {
    if (op.passThrough()) {
      return passThrough(chain, op);
    }
    // The deadline's backstop watches the plain call as it watches execute()'s attempts, so the
    // deadline bounds a trickled body read after the call returned, and a cancel of the call
    // cancels the operation (see DeadlineWatchdog's listener).
    op.watchPlainCall(chain.call());
    if (client.lifecycle().isClosedNow()) {
      chain.call().cancel(); // closeNow() came before the watchdog knew the call
    }
    // The request was stamped with the key once, when the operation was made: every attempt
    // carries the same key.
    return BlockingDriver.run(op, new BlockingDriver.Attempts() {
      @Override
      public Response send(Attempt attempt, Request request) throws IOException {
        return AttemptSetupInterceptor.withTimeouts(chain, attempt.remainingNanos(),
            attempt.op().retryPolicy()).proceed(request);
      }

      @Override
      public boolean lastCanceled() {
        return chain.call().isCanceled();
      }
    });
  }
}
