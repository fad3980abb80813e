package io.github.resilienthttp;

import java.io.InterruptedIOException;
import java.util.Objects;

/**
 * The operation's total deadline ({@link RetryPolicy#deadline()} or
 * {@link Operation#deadline(java.time.Duration)}) passed, or the next retry could only start after it.
 * The {@link #getCause() cause} is the last attempt's failure, when there was one.
 *
 * <p>Extends {@link InterruptedIOException}, like OkHttp's own call timeout. When the deadline passes
 * while the last attempt is in flight, its outcome is unknown for the same reasons as
 * {@link OutcomeUnknownException}: resume with the same key, or query.
 */
public class DeadlineExceededException extends InterruptedIOException implements OperationFailure {
  private static final long serialVersionUID = 1L;

  /** The operation's idempotency key. */
  private final String idempotencyKey;
  /** Whether the key was sent. */
  private final boolean idempotencyKeySent;
  /** Attempts started. */
  private final int attempts;
  /** The machine-readable reason. */
  private final String reason;

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
    super(ResilientHttpException.describe(message, idempotencyKey, attempts, reason));
    this.idempotencyKey = Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    this.idempotencyKeySent = idempotencyKeySent;
    this.attempts = attempts;
    this.reason = Objects.requireNonNull(reason, "reason");
    if (cause != null) {
      initCause(cause);
    }
  }

  @Override
  public String idempotencyKey() {
    return idempotencyKey;
  }

  @Override
  public boolean idempotencyKeySent() {
    return idempotencyKeySent;
  }

  @Override
  public int attempts() {
    return attempts;
  }

  @Override
  public String reason() {
    return reason;
  }
}
