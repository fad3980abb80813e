package io.github.resilienthttp;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * For async attempts (each its own OkHttp call, see {@link AsyncOperation}): turns OkHttp's silent
 * retries off and shrinks the attempt's timeouts to the time left before the deadline, exactly as
 * {@link RetryInterceptor} does for blocking attempts. Not API.
 */
final class AttemptSetupInterceptor implements Interceptor {
  @Override
  public Response intercept(Chain chain) throws IOException {
    OperationContext op = chain.call().tag(OperationContext.class);
    AttemptState state = op == null ? null : op.currentAttempt;
    if (state == null) {
      return chain.proceed(chain.request());
    }
    return RetryInterceptor.withTimeouts(chain.withRetryOnConnectionFailure(false),
        state.remainingNanos, state.operation.client.retryPolicy()).proceed(chain.request());
  }
}
