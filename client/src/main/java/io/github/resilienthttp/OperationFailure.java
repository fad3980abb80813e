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
   * What every operation failure carries, in one place: the SDK's exceptions hold one and answer
   * the accessors below from it.
   *
   * @param idempotencyKey the operation's idempotency key, whether or not it was sent; not null
   * @param idempotencyKeySent whether the key was sent with the operation's requests
   * @param attempts how many attempts were started (0 when rejected before the first)
   * @param reason the machine-readable reason; not null
   * @serial exclude
   */
  record Facts(String idempotencyKey, boolean idempotencyKeySent, int attempts, String reason)
      implements java.io.Serializable {
    /**
     * Checks the fields.
     *
     * @param idempotencyKey the operation's idempotency key, whether or not it was sent; not null
     * @param idempotencyKeySent whether the key was sent with the operation's requests
     * @param attempts how many attempts were started (0 when rejected before the first)
     * @param reason the machine-readable reason; not null
     * @throws NullPointerException when the key or the reason is null
     */
    public Facts {
      java.util.Objects.requireNonNull(idempotencyKey, "idempotencyKey");
      java.util.Objects.requireNonNull(reason, "reason");
    }

    /**
     * {@code message} with the key's first 8 characters (never the whole key: not for logs), the
     * attempts and the reason: the message of the SDK's exceptions.
     *
     * @param message what went wrong, for people
     * @return the exception's message
     */
    public String describe(String message) {
      return message + " [key=" + IdempotencyKeyPolicy.shorten(idempotencyKey) + "…, attempts="
          + attempts + ", reason=" + reason + "]";
    }
  }

  /**
   * The failure's facts; the accessors below read them.
   *
   * @return the failure's facts
   */
  Facts facts();

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
  default String idempotencyKey() {
    return facts().idempotencyKey();
  }

  /**
   * Whether the key was sent with the operation's requests, so that the server can deduplicate a
   * repeat. When {@code false} and the method is not idempotent, repeating the request is not safe
   * ({@link ResilientHttpClient#retry(OperationFailure, okhttp3.Request)} refuses it).
   *
   * @return whether the key was sent with the operation's requests
   */
  default boolean idempotencyKeySent() {
    return facts().idempotencyKeySent();
  }

  /**
   * How many attempts were started (0 when the operation was rejected before the first).
   *
   * @return how many attempts were started
   */
  default int attempts() {
    return facts().attempts();
  }

  /**
   * The classifier's reason for the last attempt, or a reason of the SDK's own (e.g. {@code "deadline"}).
   *
   * @return the reason
   */
  default String reason() {
    return facts().reason();
  }
}
