package io.github.resilienthttp;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * A network interceptor that sees every request OkHttp is about to write on a connection, including
 * OkHttp's own follow-ups (redirects, authentication) and any silent retries. It records that the
 * attempt may have reached the server (so a failure before this point is known to be "not sent") and
 * counts network requests per operation, so the SDK's report equals what the server saw. Not API.
 */
final class NetworkAttemptTracker implements Interceptor {
  @Override
  public Response intercept(Chain chain) throws IOException {
    AttemptState state = chain.request().tag(AttemptState.class);
    if (state != null) {
      state.networkRequests++;
      state.operation.networkRequestStarted();
    }
    return chain.proceed(chain.request());
  }
}
