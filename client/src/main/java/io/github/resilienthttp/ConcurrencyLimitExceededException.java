package io.github.resilienthttp;

import java.time.Duration;

/**
 * The target's adaptive concurrency limit ({@link ConcurrencyLimitPolicy}) was reached, so the
 * attempt was <em>not sent</em> (it does not wait: {@link #waited()} is zero). A
 * {@link BulkheadFullException}, so code that handles a full bulkhead handles it too; its
 * {@link #reason() reason} is {@value #REASON}. After an earlier attempt whose outcome is unknown,
 * the caller gets {@link OutcomeUnknownException} with this exception attached as suppressed.
 */
public class ConcurrencyLimitExceededException extends BulkheadFullException {
  private static final long serialVersionUID = 1L;
  /** The failure's {@link #reason() reason}. */
  public static final String REASON = "concurrency-limit";

  /** The limit at the time. */
  private final int limit;

  /**
   * Creates the exception.
   *
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started before the refused one
   * @param target the limited target, {@code scheme://host:port}
   * @param limit the target's limit when the attempt was refused
   * @param cause the previous attempt's failure, may be {@code null}
   */
  public ConcurrencyLimitExceededException(String idempotencyKey, boolean idempotencyKeySent,
      int attempts, String target, int limit, Throwable cause) {
    super("the adaptive concurrency limit of " + target + " (" + limit
        + " in flight) is reached; nothing was sent", idempotencyKey, idempotencyKeySent, attempts,
        Duration.ZERO, REASON, cause);
    this.limit = limit;
  }

  /**
   * The target's concurrency limit when the attempt was refused.
   *
   * @return the limit, 1 or more
   */
  public int limit() {
    return limit;
  }
}
