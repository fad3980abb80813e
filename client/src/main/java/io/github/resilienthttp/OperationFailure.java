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
   * <p><b>Check {@link #idempotencyKeySent()} before reusing it.</b> A key that was never sent (a POST
   * with {@code sendIdempotencyKey(false)}, or a key policy that sends none for the method) proves
   * nothing to the server: re-sending the request with it can do the work twice.
   * {@link ResilientHttpClient#retry(OperationFailure, okhttp3.Request)} repeats an intent only when
   * that is safe.
   *
   * @return the operation's idempotency key
   */
  String idempotencyKey();

  /**
   * Whether the key was sent with the operation's requests, so that the server can deduplicate a
   * repeat. When {@code false} and the method is not idempotent, repeating the request is not safe
   * ({@link ResilientHttpClient#retry(OperationFailure, okhttp3.Request)} refuses it).
   *
   * @return whether the key was sent with the operation's requests
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
