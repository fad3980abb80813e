package io.github.resilienthttp;

import java.io.IOException;
import java.util.Objects;

/**
 * An operation failed and will not be retried. Thrown as is for a permanent failure (the classifier
 * said {@link Decision.Kind#FAIL} about an exception); its subclasses say more.
 *
 * <p>The message never contains the whole idempotency key (keys are not credentials, but they are
 * not for logs either): only its first 8 characters.
 */
public class ResilientHttpException extends IOException implements OperationFailure {
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
   * @param reason a short machine-readable reason
   * @param cause the last attempt's failure, may be {@code null}
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   */
  public ResilientHttpException(
      String message, String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String reason, Throwable cause) {
    super(describe(message, idempotencyKey, attempts, reason), cause);
    this.idempotencyKey = Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    this.idempotencyKeySent = idempotencyKeySent;
    this.attempts = attempts;
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  static String describe(String message, String key, int attempts, String reason) {
    return message + " [key=" + IdempotencyKeyPolicy.shorten(key) + "…, attempts=" + attempts
        + ", reason=" + reason + "]";
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
