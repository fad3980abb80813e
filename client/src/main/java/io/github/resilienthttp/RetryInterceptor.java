package io.github.resilienthttp;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The blocking driver of the retry loop: an application interceptor that calls
 * {@code chain.proceed} once per attempt, so every attempt shares the wrapped client's connection
 * pool, dispatcher, event listener and the user's own interceptors (which run per attempt, after this
 * one). Waits between attempts go through the client's {@link TimeSource}. The decisions are
 * {@link RetryLoop}'s.
 *
 * <p>It is the SDK client's only application interceptor, and the first. For a plain OkHttp call on
 * {@link ResilientHttpClient#okHttpClient()} it first makes the call an operation. It stamps the
 * operation's idempotency key on the request once, so that every attempt carries the same key.
 *
 * <p>The SDK's client has OkHttp's {@code retryOnConnectionFailure} off: OkHttp would otherwise
 * silently re-send a request after a failed pooled connection (POST included) and repeat a 408, so
 * one SDK attempt could be several server requests. A pass-through call gets the wrapped client's
 * setting back. {@link NetworkAttemptTracker} counts what really
 * went on the wire and stops OkHttp's last silent repeat (503 with {@code Retry-After: 0}). Not API.
 */
final class RetryInterceptor implements Interceptor {
  private final ResilientHttpClient client;
  /** The wrapped client's setting, for pass-through calls (the SDK's client has it off). */
  private final boolean wrappedRetriesOnConnectionFailure;

  RetryInterceptor(ResilientHttpClient client, boolean wrappedRetriesOnConnectionFailure) {
    this.client = client;
    this.wrappedRetriesOnConnectionFailure = wrappedRetriesOnConnectionFailure;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    OperationContext op = chain.call().tag(OperationContext.class);
    if (op == null) {
      // A plain OkHttp call on client.okHttpClient(): it becomes an operation here.
      OperationContext plain = Operation.plainCallContext(client, request);
      op = chain.call().tag(OperationContext.class, () -> plain);
    }
    if (op.passThrough) {
      return (wrappedRetriesOnConnectionFailure ? chain.withRetryOnConnectionFailure(true) : chain)
          .proceed(request);
    }
    // The key is stamped once, before the first attempt: every attempt carries the same key.
    RetryLoop loop = new RetryLoop(op, client.idempotencyKeyPolicy().stamp(request, op));
    try {
      Response response = run(loop, chain);
      loop.ended(response, null);
      return response;
    } catch (IOException | RuntimeException | Error e) {
      loop.ended(null, e);
      throw e;
    }
  }

  private static Response run(RetryLoop loop, Chain chain) throws IOException {
    ResilientHttpClient client = loop.client;
    while (true) {
      long remaining = loop.beforeAttempt();
      BulkheadGate bulkhead = client.bulkheadGate();
      if (bulkhead != null) {
        long waitStart = System.nanoTime();
        long allowed = RetryLoop.bulkheadWaitNanos(remaining);
        boolean admitted;
        try {
          admitted = bulkhead.acquire(allowed);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw loop.interrupted();
        }
        if (!admitted) {
          throw loop.bulkheadRejected(System.nanoTime() - waitStart, bulkhead.cutByDeadline(allowed));
        }
        remaining = loop.op.remainingNanos();
      }

      Response result;
      try {
        Request attempt = loop.startAttempt(remaining);
        Response response = null;
        IOException failure = null;
        try {
          response = withTimeouts(chain, remaining, client.retryPolicy()).proceed(attempt);
        } catch (IOException e) {
          failure = e;
        }
        result = loop.afterAttempt(response, failure, chain.call().isCanceled());
      } finally {
        loop.releaseBreakerPermission();
        if (bulkhead != null) {
          bulkhead.release();
        }
      }
      if (result != null) {
        return result;
      }
      try {
        client.timeSource().sleep(loop.retryDelay());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw loop.interrupted();
      }
    }
  }

  /** Shrinks the attempt's timeouts so that no attempt outlives the deadline. */
  static Chain withTimeouts(Chain chain, long remainingNanos, RetryPolicy policy) {
    long cap = remainingNanos;
    if (policy.attemptTimeout().isPresent()) {
      cap = Math.min(cap, policy.attemptTimeout().get().toNanos());
    }
    int capMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(cap)));
    // Each with...() copies the chain: only change what needs changing.
    Chain c = chain;
    int connect = shrink(c.connectTimeoutMillis(), capMillis);
    if (connect != c.connectTimeoutMillis()) {
      c = c.withConnectTimeout(connect, TimeUnit.MILLISECONDS);
    }
    int read = shrink(c.readTimeoutMillis(), capMillis);
    if (read != c.readTimeoutMillis()) {
      c = c.withReadTimeout(read, TimeUnit.MILLISECONDS);
    }
    int write = shrink(c.writeTimeoutMillis(), capMillis);
    if (write != c.writeTimeoutMillis()) {
      c = c.withWriteTimeout(write, TimeUnit.MILLISECONDS);
    }
    return c;
  }

  /** OkHttp's 0 means "no timeout". */
  private static int shrink(int currentMillis, int capMillis) {
    return currentMillis == 0 ? capMillis : Math.min(currentMillis, capMillis);
  }
}
