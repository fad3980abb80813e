package io.github.resilienthttp;

import java.time.Duration;

/**
 * The client's bulkhead had no free permit within the allowed wait (the bulkhead's maximum wait, or
 * what was left of the operation's deadline, whichever is shorter), so the attempt was not sent.
 * The {@link #getCause() cause} is the previous attempt's failure, if any.
 *
 * <p>Not to be confused with resilience4j's own
 * {@code io.github.resilience4j.bulkhead.BulkheadFullException}, which the SDK never throws: this one
 * is an {@link java.io.IOException} and carries the operation's idempotency key.
 */
public class BulkheadFullException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;

  /** How long the attempt waited for a permit. */
  private final Duration waited;

  /**
   * Creates the exception.
   *
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   * @param bulkheadName the bulkhead's name
   * @param waited how long the attempt waited for a permit
   * @param cause the last attempt's failure, may be {@code null}
   */
  public BulkheadFullException(String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String bulkheadName, Duration waited, Throwable cause) {
    super("bulkhead '" + bulkheadName + "' is full (waited " + waited.toMillis()
        + " ms); nothing was sent", idempotencyKey, idempotencyKeySent, attempts, "bulkhead-full", cause);
    this.waited = waited;
  }

  /**
   * Creates the exception of a subtype, with its own message and reason.
   *
   * @param message what went wrong, for people
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   * @param waited how long the attempt waited for a permit
   * @param reason the machine-readable reason
   * @param cause the last attempt's failure, may be {@code null}
   */
  protected BulkheadFullException(String message, String idempotencyKey,
      boolean idempotencyKeySent, int attempts, Duration waited, String reason, Throwable cause) {
    super(message, idempotencyKey, idempotencyKeySent, attempts, reason, cause);
    this.waited = waited;
  }

  /**
   * How long the attempt waited for a permit.
   *
   * @return how long the attempt waited for a permit
   */
  public Duration waited() {
    return waited;
  }
}
