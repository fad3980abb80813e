package io.github.resilienthttp;

/**
 * Waiting for an accepted asynchronous operation stopped without knowing how it ended: a poll failed
 * for good (its retries ran out, the budget or the breaker refused it, a status the
 * {@link StatusContract} cannot read, a permanent status such as {@code 404} for a lost job), or the
 * wait was cancelled ({@code canceled}). The submit is never re-sent for this; the
 * {@link #getCause() cause} is the poll's failure. The server's job may still be running: resume with
 * {@link #resumeToken()}.
 */
public class PollFailedException extends ResilientHttpException implements ResumableFailure {
  private static final long serialVersionUID = 1L;

  /** The resume token. */
  private final ResumeToken resumeToken;
  /** The status code. */
  private final int statusCode;

  /**
   * Creates the exception.
   *
   * @param message what went wrong, for people
   * @param resumeToken the operation's token
   * @param attempts attempts started (submit and polls)
   * @param reason a short machine-readable reason
   * @param statusCode the last poll's HTTP status, or -1
   * @param cause the poll's failure, may be {@code null}
   */
  public PollFailedException(String message, ResumeToken resumeToken, int attempts, String reason,
      int statusCode, Throwable cause) {
    super(new Facts(resumeToken.idempotencyKey(), resumeToken.idempotencyKeySent(), attempts,
        reason, true), message, cause);
    this.resumeToken = resumeToken;
    this.statusCode = statusCode;
  }

  @Override
  public ResumeToken resumeToken() {
    return resumeToken;
  }

  /** {@return the last poll's HTTP status, or -1 when it failed with an exception} */
  public int statusCode() {
    return statusCode;
  }
}
