package io.github.resilienthttp.internal.okhttp;

import io.github.resilienthttp.internal.engine.Attempt;
import okhttp3.Call;
import okhttp3.EventListener;

/**
 * The SDK's event listener on every call of its clients: tells the call's {@link Attempt} when
 * OkHttp starts writing a request ({@code requestHeadersStart}), from which moment the attempt may
 * have reached the server, and when it starts writing a body ({@code requestBodyStart}), after
 * which a one-shot body cannot be sent again. This is the only exact "sent" signal OkHttp gives: a
 * network interceptor runs before user network interceptors and before OkHttp writes anything, so
 * a failure there (request signing, a connection that breaks before the write) is "not sent".
 *
 * <p>It runs before the user's listener (see {@code ClientRuntime}), so a user listener that throws
 * cannot hide the event. Stateless and thread-safe: one instance for all calls. Not API.
 */
public final class WireListener extends EventListener {
  public static final WireListener INSTANCE = new WireListener();

  private WireListener() {}

  @Override
  public void requestHeadersStart(Call call) {
    Attempt attempt = Attempt.of(call);
    if (attempt != null) {
      attempt.requestSent();
    }
  }

  @Override
  public void requestBodyStart(Call call) {
    Attempt attempt = Attempt.of(call);
    if (attempt != null) {
      attempt.requestBodyStarted();
    }
  }
}
