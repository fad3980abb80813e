package io.github.resilienthttp;

import java.time.Duration;

/**
 * A resume was refused because the token's idempotency key is older than the configured key retention
 * ({@link AsyncOperationPolicy.Builder#keyRetention(Duration, AsyncOperationPolicy.LateResume)} with
 * {@link AsyncOperationPolicy.LateResume#REFUSE}): the server may have forgotten the key, so that
 * re-submitting with it could do the work a second time, and its status resource may be gone. Nothing
 * was sent. Find out by other means (a lookup of the business record) before acting.
 * {@link #reason()} is {@code key-retention-exceeded}.
 */
public class KeyRetentionExceededException extends ResilientHttpException
    implements ResumableFailure {
  private static final long serialVersionUID = 1L;

  /** The resume token. */
  private final ResumeToken resumeToken;
  /** The key age. */
  private final Duration keyAge;
  /** The retention. */
  private final Duration retention;

  /**
   * Creates the exception.
   *
   * @param resumeToken the refused token
   * @param keyAge how old the key was
   * @param retention the configured retention
   */
  public KeyRetentionExceededException(ResumeToken resumeToken, Duration keyAge,
      Duration retention) {
    super(new Facts(resumeToken.idempotencyKey(), resumeToken.idempotencyKeySent(), 0,
        "key-retention-exceeded", true),
        "resume refused: the key is " + keyAge + " old, past the key retention of " + retention,
        null);
    this.resumeToken = resumeToken;
    this.keyAge = keyAge;
    this.retention = retention;
  }

  @Override
  public ResumeToken resumeToken() {
    return resumeToken;
  }

  /** {@return how old the key was when the resume was refused} */
  public Duration keyAge() {
    return keyAge;
  }

  /** {@return the configured key retention} */
  public Duration retention() {
    return retention;
  }
}
