package io.github.resilienthttp.internal.engine;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.RejectedExecutionException;
import okhttp3.OkHttpClient;

/**
 * Recognises an attempt that OkHttp's dispatcher refused because its executor is shut down
 * ({@code okHttp.dispatcher().executorService().shutdown()}, or the SDK's
 * {@code closeOkHttpClientOnClose}). OkHttp 5 then fails the enqueued call at once, on the thread
 * that enqueued it, with {@code InterruptedIOException("executor rejected")} (caused by the
 * executor's {@link RejectedExecutionException} when it tried), which the classifier would
 * otherwise take for a transient, unsent failure and retry. Not API.
 */
final class DispatcherShutdown {
  /** The reason of the failure: {@value}. */
  static final String REASON = "dispatcher-shut-down";

  private DispatcherShutdown() {}

  /**
   * Whether {@code failure} is the dispatcher's refusal: OkHttp's own exception for it, while the
   * wrapped client's executor is shut down (both, so that a read timeout of a call that was running
   * when the executor shut down is still a timeout).
   */
  static boolean rejected(OkHttpClient wrapped, IOException failure) {
    return failure instanceof InterruptedIOException
        && (failure.getCause() instanceof RejectedExecutionException
            || "executor rejected".equals(failure.getMessage()))
        && wrapped.dispatcher().executorService().isShutdown();
  }
}
