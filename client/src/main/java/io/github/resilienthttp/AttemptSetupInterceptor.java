package io.github.resilienthttp;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * For async attempts (each its own OkHttp call, see {@link AsyncOperation}): shrinks the attempt's
 * timeouts to the time left before the deadline, exactly as {@link RetryInterceptor} does for
 * blocking attempts. (OkHttp's silent retries are off on the client for async attempts.) Not API.
 */
final class AttemptSetupInterceptor implements Interceptor {
  @Override
  public Response intercept(Chain chain) throws IOException {
    OperationContext op = chain.call().tag(OperationContext.class);
    if (op == null || op.attempts() == 0) {
      return chain.proceed(chain.request());
    }
    return RetryInterceptor.withTimeouts(chain, op.attemptRemainingNanos(),
        op.client.retryPolicy()).proceed(chain.request());
  }
}
