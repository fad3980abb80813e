package io.github.resilienthttp.internal.okhttp;

import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import io.github.resilienthttp.internal.engine.Attempt;
import java.io.IOException;
import okhttp3.Call;
import okhttp3.EventListener;

/**
 * The SDK's one event listener on every call of its clients: tells the call's {@link Attempt} when
 * OkHttp starts writing a request ({@code requestHeadersStart}), from which moment the attempt may
 * have reached the server, and when it starts writing a body ({@code requestBodyStart}), after
 * which a one-shot body cannot be sent again; and tells the client's {@link DeadlineWatchdog} when
 * a call ended or was cancelled. The first is the only exact "sent" signal OkHttp gives: a network
 * interceptor runs before user network interceptors and before OkHttp writes anything, so a
 * failure there (request signing, a connection that breaks before the write) is "not sent". One
 * listener rather than two combined, so that none of OkHttp's events is dispatched twice.
 *
 * <p>It runs before the user's listener (see {@code ClientRuntime}), so a user listener that throws
 * cannot hide the event. Stateless and thread-safe: one instance per client for all its calls. Not
 * API.
 */
public final class WireListener extends EventListener {
  private final DeadlineWatchdog watchdog;

  /**
   * The listener of the calls of a client whose deadlines {@code watchdog} watches.
   *
   * @param watchdog the client's deadline watchdog
   */
  public WireListener(DeadlineWatchdog watchdog) {
    this.watchdog = watchdog;
  }

  @Override
  public void canceled(Call call) {
    watchdog.callCanceled(call);
  }

  @Override
  public void callEnd(Call call) {
    watchdog.callEnded(call);
  }

  @Override
  public void callFailed(Call call, IOException ioe) {
    watchdog.callEnded(call);
  }

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
