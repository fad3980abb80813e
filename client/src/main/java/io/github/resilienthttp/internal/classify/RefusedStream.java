package io.github.resilienthttp.internal.classify;

import java.io.IOException;
import java.lang.reflect.Field;

/**
 * Recognises OkHttp's reports of HTTP/2 streams the server provably did not process, so that they
 * count as <em>not sent</em> even though request bytes may have been written:
 *
 * <ul>
 *   <li>{@code StreamResetException} with {@code ErrorCode.REFUSED_STREAM}: RFC 9113 §8.7 says a
 *       stream refused this way was not processed and "can be retried";
 *   <li>{@code ConnectionShutdownException}: the connection was shutting down (GOAWAY) before the
 *       stream was created, so nothing of it was sent. Streams above a GOAWAY's last-stream-id
 *       (RFC 9113 §6.8, "not processed") are reported by OkHttp as {@code REFUSED_STREAM} resets.
 * </ul>
 *
 * <p>Both types live in {@code okhttp3.internal.http2}: not API, and not exported by OkHttp's
 * module. So they are matched by class name, and the error code is read from the public
 * {@code errorCode} field when reflection is allowed, else from the message OkHttp writes
 * ({@code "stream was reset: REFUSED_STREAM"}). {@code Http2Test} pins both against the OkHttp
 * version in use. Any other reset code (e.g. {@code CANCEL}, {@code INTERNAL_ERROR}) stays
 * "outcome unknown": the server may have read and processed the request. Stateless. Not API.
 */
public final class RefusedStream {
  static final String STREAM_RESET = "okhttp3.internal.http2.StreamResetException";
  static final String CONNECTION_SHUTDOWN = "okhttp3.internal.http2.ConnectionShutdownException";
  private static final String REFUSED = "REFUSED_STREAM";

  private RefusedStream() {}

  /**
   * The reason for a failure the server provably did not process, or {@code null}.
   *
   * @return {@code "http2-refused-stream"}, {@code "http2-connection-shutdown"}, or {@code null}
   */
  public static String reason(IOException e) {
    // OkHttp throws these directly; a wrapper (user interceptor) may carry them as its cause.
    Throwable t = e;
    for (int depth = 0; t != null && depth < 4; depth++, t = t.getCause()) {
      String name = t.getClass().getName();
      if (name.equals(CONNECTION_SHUTDOWN)) {
        return "http2-connection-shutdown";
      }
      if (name.equals(STREAM_RESET)) {
        return REFUSED.equals(errorCode(t)) ? "http2-refused-stream" : null;
      }
    }
    return null;
  }

  /** The reset's error code name: from the field when reachable, else from OkHttp's message. */
  static String errorCode(Throwable streamReset) {
    try {
      Field f = streamReset.getClass().getField("errorCode");
      Object code = f.get(streamReset);
      if (code instanceof Enum<?> en) {
        return en.name();
      }
    } catch (ReflectiveOperationException | RuntimeException notReachable) {
      // Not exported to us on the module path: fall back to the message below.
    }
    String message = streamReset.getMessage();
    if (message == null) {
      return null;
    }
    int colon = message.lastIndexOf(':');
    return message.substring(colon + 1).trim();
  }
}
