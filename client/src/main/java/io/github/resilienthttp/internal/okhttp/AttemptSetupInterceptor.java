package io.github.resilienthttp.internal.okhttp;

import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.internal.engine.Attempt;
import io.github.resilienthttp.internal.engine.DurationMath;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * For attempts that are their own OkHttp call ({@link io.github.resilienthttp.Operation#execute()}
 * and {@link io.github.resilienthttp.internal.engine.AsyncDriver}): shrinks the attempt's connect,
 * read and write timeouts to the time left before the deadline (and to the policy's attempt
 * timeout), as {@link RetryInterceptor} does for plain calls. It sits only on the client that
 * {@link io.github.resilienthttp.internal.engine.ClientRuntime#attemptClient(long)} picks when some
 * timeout must shrink, so an attempt that needs none pays for no extra interceptor level. (OkHttp's
 * silent retries are off on both attempt clients.) Not API.
 */
public final class AttemptSetupInterceptor implements Interceptor {
  @Override
  public Response intercept(Chain chain) throws IOException {
    Attempt attempt = chain.call().tag(Attempt.TAG);
    if (attempt == null) {
      return chain.proceed(chain.request());
    }
    return withTimeouts(chain, attempt.remainingNanos(),
        attempt.op().retryPolicy()).proceed(chain.request());
  }

  /**
   * Shrinks the attempt's timeouts so that no attempt outlives the deadline. The cap is rounded up
   * to whole milliseconds (OkHttp's unit): a timeout capped by the deadline then fires at or after
   * it, never before, so the caller is told the deadline ended the operation
   * ({@link io.github.resilienthttp.DeadlineExceededException}), not that the attempt failed with
   * time still left.
   */
  static Chain withTimeouts(Chain chain, long remainingNanos, RetryPolicy policy) {
    long cap = remainingNanos;
    if (policy.attemptTimeout().isPresent()) {
      cap = Math.min(cap, DurationMath.toNanos(policy.attemptTimeout().get()));
    }
    int capMillis = capMillis(cap);
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

  /** {@code nanos} in whole milliseconds, rounded up, from 1 to {@link Integer#MAX_VALUE}. */
  public static int capMillis(long nanos) {
    long millis = nanos / 1_000_000L + (nanos % 1_000_000L > 0 ? 1 : 0);
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, millis));
  }

  /** OkHttp's 0 means "no timeout". */
  private static int shrink(int currentMillis, int capMillis) {
    return currentMillis == 0 ? capMillis : Math.min(currentMillis, capMillis);
  }
}
