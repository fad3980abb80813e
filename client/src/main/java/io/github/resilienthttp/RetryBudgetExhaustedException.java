package io.github.resilienthttp;

/**
 * The operation wanted to retry but the client's {@link RetryBudget} refused: retries across the
 * client already used their share of the traffic, which during an outage protects the failing server
 * from a multiplied load. Retries come back as the budget refills (see {@link RetryBudget}).
 *
 * <p>The {@link #getCause() cause} is the failure of the last attempt, the one that would have been
 * retried. The reason is normally {@link #REASON}. The retry loop may also attach this exception as
 * {@linkplain Throwable#addSuppressed(Throwable) suppressed} to another failure, to record that the
 * budget, not the policy, stopped the retries.
 */
public class RetryBudgetExhaustedException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;

  /** The {@link #reason()} of a refusal by the budget. */
  public static final String REASON = "retry-budget-exhausted";

  /**
   * Creates the exception.
   *
   * @param message what went wrong, for people
   * @param reason a short machine-readable reason, normally {@link #REASON}
   * @param cause the last attempt's failure, may be {@code null}
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   */
  public RetryBudgetExhaustedException(
      String message, String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String reason, Throwable cause) {
    super(message, idempotencyKey, idempotencyKeySent, attempts, reason, cause);
  }
}
