package io.github.resilienthttp;

import java.util.Objects;
import okhttp3.Headers;

/**
 * The operation ended on an answer about an earlier attempt, not about the request itself: a
 * {@code 409} to a retry of a keyed request whose earlier attempt may have reached the server (the
 * server says the key's first request is still in progress, or a middleware answers its replays with
 * {@code 409}), and the retries ran out (attempts, deadline, budget or breaker) before a definite
 * answer came. The first request may have taken effect: the outcome is unknown, never a definite
 * failure. The last answer is attached ({@link #answerStatus()}, {@link #answerHeaders()},
 * {@link #answerBody()}: a copy, its response is closed), because some servers put the recorded
 * result in it.
 *
 * <p>What to do: as for any {@link OutcomeUnknownException}, resume with the same key later, or look
 * the outcome up; never repeat the intent with a new key.
 */
public final class OutcomeUnknownAnswerException extends OutcomeUnknownException {
  private static final long serialVersionUID = 1L;

  /** The answer's headers. */
  private final transient Headers headers;
  /** The answer's body, at most {@link #MAX_BODY_BYTES}. */
  private final byte[] body;

  /** The most of the answer's body kept, in bytes. */
  public static final int MAX_BODY_BYTES = 64 * 1024;

  /**
   * Creates the exception.
   *
   * @param message what happened
   * @param idempotencyKey the operation's key
   * @param idempotencyKeySent whether it was sent
   * @param attempts attempts made
   * @param reason a machine-readable reason
   * @param status the answer's status
   * @param headers the answer's headers
   * @param body the answer's body (a copy, up to {@link #MAX_BODY_BYTES})
   */
  public OutcomeUnknownAnswerException(String message, String idempotencyKey, boolean idempotencyKeySent,
      int attempts, String reason, int status, Headers headers, byte[] body) {
    super(message, idempotencyKey, idempotencyKeySent, attempts, reason, status, null);
    this.headers = Objects.requireNonNull(headers, "headers");
    this.body = Objects.requireNonNull(body, "body").clone();
  }

  /** {@return the last answer's status, as {@link #statusCode()}} */
  public int answerStatus() {
    return statusCode();
  }

  /** {@return the last answer's headers (empty after deserialization)} */
  public Headers answerHeaders() {
    return headers == null ? Headers.of() : headers;
  }

  /** {@return the last answer's body, up to {@link #MAX_BODY_BYTES} (a copy)} */
  public byte[] answerBody() {
    return body.clone();
  }
}
