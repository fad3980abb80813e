package io.github.resilienthttp;

/**
 * {@link ResilientHttpClient#retry(OperationFailure, okhttp3.Request)} refused to repeat an intent:
 * its key was never sent and its method is not idempotent, so the server cannot tell a repeat from
 * new work. Nothing was sent. Settle the first operation's outcome before sending it again.
 *
 * <p>An {@link IllegalStateException}: a programming decision to make, not a transient failure.
 */
public final class RetryRefusedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The reason: the key was not sent. */
  public static final String KEY_NOT_SENT = "key-not-sent";

  /** The first operation's key. */
  private final String idempotencyKey;

  RetryRefusedException(OperationFailure failure, String method) {
    super("not safe to repeat: the idempotency key " + IdempotencyKeyPolicy.shorten(
        failure.idempotencyKey()) + "… was never sent and " + method + " is not idempotent, so a"
        + " server that did the work would do it again; settle the outcome first (an outcome"
        + " query, or the server's records). Nothing was sent");
    this.idempotencyKey = failure.idempotencyKey();
  }

  /** {@return {@link #KEY_NOT_SENT}} */
  public String reason() {
    return KEY_NOT_SENT;
  }

  /** {@return the first operation's key (never sent)} */
  public String idempotencyKey() {
    return idempotencyKey;
  }
}
