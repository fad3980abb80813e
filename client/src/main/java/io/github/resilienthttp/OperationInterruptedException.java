package io.github.resilienthttp;

import java.io.InterruptedIOException;
import java.util.Objects;

/**
 * The calling thread was interrupted while the operation was waiting between attempts (or before one).
 * The thread's interrupt flag is set again before this is thrown, so code further up still sees it.
 * The operation stops at once; no further attempt is made.
 */
public class OperationInterruptedException extends InterruptedIOException implements OperationFailure {
  private static final long serialVersionUID = 1L;

  /** The operation's idempotency key. */
  private final String idempotencyKey;
  /** Whether the key was sent. */
  private final boolean idempotencyKeySent;
  /** Attempts started. */
  private final int attempts;

  /**
   * Creates the exception.
   *
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   * @param cause the {@link InterruptedException}, may be {@code null}
   */
  public OperationInterruptedException(
      String idempotencyKey, boolean idempotencyKeySent, int attempts, Throwable cause) {
    super(ResilientHttpException.describe("operation interrupted", idempotencyKey, attempts,
        "interrupted"));
    this.idempotencyKey = Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    this.idempotencyKeySent = idempotencyKeySent;
    this.attempts = attempts;
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
    return "interrupted";
  }
}
