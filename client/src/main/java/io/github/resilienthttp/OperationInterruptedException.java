package io.github.resilienthttp;

import java.io.InterruptedIOException;

/**
 * The calling thread was interrupted while the operation was waiting between attempts (or before one).
 * The thread's interrupt flag is set again before this is thrown, so code further up still sees it.
 * The operation stops at once; no further attempt is made.
 */
public class OperationInterruptedException extends InterruptedIOException implements OperationFailure {
  private static final long serialVersionUID = 1L;

  /** The key, attempts and reason. */
  private final Facts facts;

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
    this(new Facts(idempotencyKey, idempotencyKeySent, attempts, "interrupted"), cause);
  }

  /**
   * Creates the exception from its facts, among them whether the server may have acted
   * ({@link #mayHaveExecuted()}); the other constructor says it did not.
   *
   * @param facts the key, attempts, reason and whether the server may have acted; not null
   * @param cause the last attempt's failure, may be {@code null}
   */
  public OperationInterruptedException(Facts facts, Throwable cause) {
    super(facts.describe("operation interrupted"));
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
