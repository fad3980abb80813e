package io.github.resilienthttp;

import java.io.InterruptedIOException;

/**
 * The operation's total deadline ({@link RetryPolicy#deadline()} or
 * {@link Operation#deadline(java.time.Duration)}) passed, or the next retry could only start after it.
 * The {@link #getCause() cause} is the last attempt's failure, when there was one.
 *
 * <p>Extends {@link InterruptedIOException}, like OkHttp's own call timeout. When the deadline passes
 * while the last attempt is in flight, its outcome is unknown for the same reasons as
 * {@link OutcomeUnknownException}: resume with the same key, or query.
 * {@link #mayHaveExecuted()} says whether any attempt may have been processed (the one rule of
 * {@link OperationFailure#mayHaveExecuted()}).
 */
public class DeadlineExceededException extends InterruptedIOException implements OperationFailure {
  private static final long serialVersionUID = 1L;

  /** The key, attempts and reason. */
  private final Facts facts;

  /**
   * Creates the exception.
   *
   * @param message what went wrong, for people
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   * @param reason a short machine-readable reason
   * @param cause the last attempt's failure, may be {@code null}
   */
  public DeadlineExceededException(
      String message, String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String reason, Throwable cause) {
    this(new Facts(idempotencyKey, idempotencyKeySent, attempts, reason), message, cause);
  }

  /**
   * Creates the exception from its facts, among them whether the server may have acted
   * ({@link #mayHaveExecuted()}: an attempt may have been processed before or while the deadline
   * passed); the other constructor says it did not.
   *
   * @param facts the key, attempts, reason and whether the server may have acted; not null
   * @param message what went wrong, for people
   * @param cause the last attempt's failure, may be {@code null}
   */
  public DeadlineExceededException(Facts facts, String message, Throwable cause) {
    super(facts.describe(message));
    this.facts = facts;
    if (cause != null) {
      initCause(cause);
    }
  }

  @Override
  public Facts facts() {
    return facts;
  }
}
