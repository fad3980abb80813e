package io.github.resilienthttp;

/**
 * The thread waiting for an accepted asynchronous operation was interrupted (its interrupt flag stays
 * set). Polling stopped; the server's job goes on: resume with {@link #resumeToken()}.
 */
public class AsyncOperationInterruptedException extends OperationInterruptedException
    implements ResumableFailure {
  private static final long serialVersionUID = 1L;

  /** The resume token. */
  private final ResumeToken resumeToken;

  /**
   * Creates the exception.
   *
   * @param resumeToken the operation's token
   * @param attempts attempts started (submit and polls)
   * @param cause the interrupt, may be {@code null}
   */
  public AsyncOperationInterruptedException(ResumeToken resumeToken, int attempts,
      Throwable cause) {
    super(new Facts(resumeToken.idempotencyKey(), resumeToken.idempotencyKeySent(), attempts,
        "interrupted", true), cause);
    this.resumeToken = resumeToken;
  }

  @Override
  public ResumeToken resumeToken() {
    return resumeToken;
  }
}
