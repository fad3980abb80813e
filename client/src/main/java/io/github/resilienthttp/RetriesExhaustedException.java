package io.github.resilienthttp;

/**
 * Every allowed attempt failed with an exception the classifier considered retryable, and no attempt
 * is left ({@link RetryPolicy#maxAttempts()}), and no attempt had an unknown outcome (each failed to
 * connect, resolve or handshake, or the server said it did not process it), so nothing happened. The
 * {@link #getCause() cause} is the last attempt's failure. When any attempt's outcome was unknown,
 * {@link OutcomeUnknownException} is thrown instead.
 *
 * <p>When the last attempt got a response, the SDK returns that response rather than throwing.
 */
public class RetriesExhaustedException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;

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
  public RetriesExhaustedException(
      String message, String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String reason, Throwable cause) {
    super(message, idempotencyKey, idempotencyKeySent, attempts, reason, cause);
  }
}
