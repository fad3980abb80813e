package io.github.resilienthttp;

import java.util.Objects;

/**
 * An accepted asynchronous operation finished without success: its status resource reported it
 * {@link PollStatus.State#FAILED failed} or {@link PollStatus.State#CANCELED canceled}. The outcome is
 * definite (the server says it did not complete); {@link #details()} is the status body (for example
 * RFC 9457 problem details, or Azure's {@code error} object), bounded by
 * {@link AsyncOperationPolicy#maxStatusBodyBytes()}. {@link #reason()} is {@code async-failed} or
 * {@code async-canceled}.
 */
public class AsyncOperationFailedException extends ResilientHttpException implements ResumableFailure {
  private static final long serialVersionUID = 1L;

  /** The resume token. */
  private final ResumeToken resumeToken;
  /** The state. */
  private final PollStatus.State state;
  /** The status code. */
  private final int statusCode;
  /** The details. */
  private final String details;

  /**
   * Creates the exception.
   *
   * @param resumeToken the operation's token
   * @param attempts attempts started (submit and polls)
   * @param state {@code FAILED} or {@code CANCELED}
   * @param statusCode the last poll's HTTP status
   * @param details the status body, for people
   */
  public AsyncOperationFailedException(ResumeToken resumeToken, int attempts,
      PollStatus.State state, int statusCode, String details) {
    super(new Facts(resumeToken.idempotencyKey(), resumeToken.idempotencyKeySent(), attempts,
        state == PollStatus.State.CANCELED ? "async-canceled" : "async-failed", true),
        "asynchronous operation " + state.name().toLowerCase(java.util.Locale.ROOT), null);
    this.resumeToken = resumeToken;
    this.state = Objects.requireNonNull(state, "state");
    this.statusCode = statusCode;
    this.details = details == null ? "" : details;
  }

  @Override
  public ResumeToken resumeToken() {
    return resumeToken;
  }

  /** {@return {@code FAILED} or {@code CANCELED}} */
  public PollStatus.State state() {
    return state;
  }

  /** {@return the HTTP status of the poll that reported the end} */
  public int statusCode() {
    return statusCode;
  }

  /** {@return the status body (problem details), for people} */
  public String details() {
    return details;
  }
}
