package io.github.resilienthttp;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The first interceptor of the SDK's client. For a plain OkHttp call (one that did not come from an
 * {@link Operation}), it makes the call an operation, with the settings of its
 * {@link OperationOptions} tag if any. Then it stamps the operation's idempotency key on the request,
 * once per operation, before the retry loop, so that every attempt carries the same key. A key header
 * the caller already put on the request is left exactly as it is. Not API.
 */
final class IdempotencyKeyInterceptor implements Interceptor {
  private final ResilientHttpClient client;

  IdempotencyKeyInterceptor(ResilientHttpClient client) {
    this.client = client;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    OperationContext op = chain.call().tag(OperationContext.class);
    if (op == null) {
      OperationContext plain = plainCallContext(request);
      op = chain.call().tag(OperationContext.class, () -> plain);
    }
    return chain.proceed(stamp(request, op));
  }

  private OperationContext plainCallContext(Request request) {
    OperationOptions options = request.tag(OperationOptions.class);
    if (options != null && options.isPassThrough()) {
      return Operation.newContext(client, request, null, false, null, true);
    }
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    String header = policy.keyFromHeader(request.header(policy.headerName()));
    String callerKey = options == null ? null : options.idempotencyKey();
    if (header != null && callerKey != null && !header.equals(callerKey)) {
      throw new IllegalArgumentException("the request carries " + policy.headerName()
          + " and an OperationOptions key that differ");
    }
    String key = header != null ? IdempotencyKeyPolicy.validateKey(header) : callerKey;
    boolean keySent;
    if (header != null) {
      keySent = true;
    } else if (options != null && options.sendIdempotencyKey() != null) {
      keySent = options.sendIdempotencyKey();
    } else {
      keySent = callerKey != null || policy.sendsKeyFor(request.method());
    }
    return Operation.newContext(client, request, key, keySent,
        options == null ? null : options.deadline(), false);
  }

  /** The request with the operation's key header, when the operation sends one. */
  static Request stamp(Request request, OperationContext op) {
    if (!op.keySent || op.passThrough) {
      return request;
    }
    IdempotencyKeyPolicy policy = op.client.idempotencyKeyPolicy();
    if (request.header(policy.headerName()) != null) {
      return request;
    }
    return request.newBuilder().header(policy.headerName(), policy.headerValue(op.key())).build();
  }
}
