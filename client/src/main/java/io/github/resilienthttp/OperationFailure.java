package io.github.resilienthttp;

/**
 * Implemented by every exception the SDK throws for a failed operation, so that a caller can always
 * recover the operation's idempotency key (to query the outcome, or to resume the same intent with
 * {@link Operation#idempotencyKey(String)}) and see how far it got.
 *
 * <p>The implementations are {@link java.io.IOException}s (callers of OkHttp and Retrofit already
 * handle those); the failure of the last attempt is the exception's {@link Throwable#getCause() cause}.
 */
public interface OperationFailure {

  /**
   * The operation's idempotency key, whether or not it was sent. Never {@code null}.
   *
   * @return the operation's idempotency key
   */
  String idempotencyKey();

  /**
   * Whether the key was sent with the operation's requests (so the server can deduplicate).
   *
   * @return whether the key was sent with the operation's requests (so the server can deduplicate)
   */
  boolean idempotencyKeySent();

  /**
   * How many attempts were started (0 when the operation was rejected before the first).
   *
   * @return how many attempts were started
   */
  int attempts();

  /**
   * The classifier's reason for the last attempt, or a reason of the SDK's own (e.g. {@code "deadline"}).
   *
   * @return the reason
   */
  String reason();
}
