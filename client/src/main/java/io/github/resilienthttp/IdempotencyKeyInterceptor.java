package io.github.resilienthttp;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Stamps the operation's idempotency key on its request, once per operation, before the retry loop,
 * so that every attempt carries the same key. A key header the caller already put on the request is
 * left exactly as it is. Not API.
 */
final class IdempotencyKeyInterceptor implements Interceptor {
  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    OperationContext op = request.tag(OperationContext.class);
    if (op == null || !op.keySent) {
      return chain.proceed(request);
    }
    IdempotencyKeyPolicy policy = op.client.idempotencyKeyPolicy();
    if (request.header(policy.headerName()) != null) {
      return chain.proceed(request);
    }
    return chain.proceed(
        request.newBuilder().header(policy.headerName(), policy.headerValue(op.key)).build());
  }
}
