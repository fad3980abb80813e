package io.github.resilienthttp;

/**
 * The server may or may not have processed the operation, and the SDK could not safely find out by
 * retrying: the request reached the server (or may have), the attempt failed in a way that does not
 * say whether it took effect (a timeout or reset after the request was written, 500, 502, 504), and
 * the operation is not idempotent (its method is not, and no idempotency key was sent) or its body
 * cannot be sent again ({@link okhttp3.RequestBody#isOneShot()}).
 *
 * <p>Also thrown when an idempotent operation stops without a definite answer after an attempt whose
 * outcome was unknown: its attempts ran out, or the retry budget, the circuit breaker or the
 * bulkhead refused the next attempt. {@link #reason()} then says which ({@code attempts-exhausted},
 * {@code retry-budget-exhausted}, {@code circuit-breaker-open}, {@code bulkhead-full}), and the
 * refusal is attached as a {@link #getSuppressed() suppressed} exception. A rejection alone would
 * suggest that nothing happened, which is not known.
 *
 * <p>What to do: query the server for the outcome, or resume the same intent with the same key
 * ({@code client.operation(request).idempotencyKey(e.idempotencyKey())}) if the server supports
 * idempotency keys. Never blindly repeat it with a new key: that may do the work twice.
 *
 * <p>{@link #mayHaveExecuted()} is always {@code true}.
 *
 * <p>{@link #statusCode()} is the last response's status when the last attempt got one (its
 * response has been closed), or -1 when it failed with an exception (the {@link #getCause() cause}).
 */
public class OutcomeUnknownException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;

  /** The last response's status code, or -1. */
  private final int statusCode;

  /**
   * Creates the exception.
   *
   * @param message what went wrong, for people
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   * @param reason a short machine-readable reason
   * @param statusCode the last response's status code, or -1 when the last attempt ended with an
   *     exception
   * @param cause the last attempt's failure, may be {@code null}
   */
  public OutcomeUnknownException(
      String message, String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String reason, int statusCode, Throwable cause) {
    super(new Facts(idempotencyKey, idempotencyKeySent, attempts, reason, true), message, cause);
    this.statusCode = statusCode;
  }

  /**
   * The last response's status code, or -1 when the last attempt ended with an exception.
   *
   * @return the last response's status code, or -1
   */
  public int statusCode() {
    return statusCode;
  }
}
