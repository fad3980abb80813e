package io.github.resilienthttp;

import java.io.IOException;

/**
 * An operation failed and will not be retried. Thrown as is for a permanent failure (the classifier
 * said {@link Decision.Kind#FAIL} about an exception); its subclasses say more.
 *
 * <p>The message never contains the whole idempotency key (keys are not credentials, but they are
 * not for logs either): only its first 8 characters.
 */
public class ResilientHttpException extends IOException implements OperationFailure {
  private static final long serialVersionUID = 1L;

  /** The key, attempts and reason. */
  private final Facts facts;

  /**
   * Creates the exception.
   *
   * @param message what went wrong, for people
   * @param reason a short machine-readable reason
   * @param cause the last attempt's failure, may be {@code null}
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   */
  public ResilientHttpException(
      String message, String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String reason, Throwable cause) {
    this(new Facts(idempotencyKey, idempotencyKeySent, attempts, reason), message, cause);
  }

  /**
   * Creates the exception from its facts, among them whether the server may have acted
   * ({@link #mayHaveExecuted()}); the other constructor says it did not.
   *
   * @param facts the key, attempts, reason and whether the server may have acted; not null
   * @param message what went wrong, for people
   * @param cause the last attempt's failure, may be {@code null}
   */
  public ResilientHttpException(Facts facts, String message, Throwable cause) {
    super(facts.describe(message), cause);
    this.facts = facts;
  }

  @Override
  public Facts facts() {
    return facts;
  }
}
