package io.github.resilienthttp;

/**
 * The deadline passed while waiting for an accepted asynchronous operation: during a poll, or because
 * the next poll (after the server's {@code Retry-After} or the poll interval) could only start after
 * it. The server's job goes on: {@link #resumeToken()} continues the wait later
 * ({@link ResilientHttpClient#resume(ResumeToken, AsyncOperationPolicy)}).
 */
public class AsyncOperationDeadlineExceededException extends DeadlineExceededException
    implements ResumableFailure {
  private static final long serialVersionUID = 1L;

  /** The resume token. */
  private final ResumeToken resumeToken;

  /**
   * Creates the exception.
   *
   * @param message what went wrong, for people
   * @param resumeToken the operation's token
   * @param attempts attempts started (submit and polls)
   * @param cause the last poll's failure, may be {@code null}
   */
  public AsyncOperationDeadlineExceededException(String message, ResumeToken resumeToken,
      int attempts, Throwable cause) {
    super(new Facts(resumeToken.idempotencyKey(), resumeToken.idempotencyKeySent(), attempts,
        "deadline-exceeded", true), message, cause);
    this.resumeToken = resumeToken;
  }

  @Override
  public ResumeToken resumeToken() {
    return resumeToken;
  }
}
