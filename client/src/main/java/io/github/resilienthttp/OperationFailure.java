package io.github.resilienthttp;

/**
 * Implemented by every exception the SDK throws for a failed operation, so that a caller can always
 * recover the operation's idempotency key (to query the outcome, or to resume the same intent with
 * {@link Operation#idempotencyKey(String)}) and see how far it got.
 *
 * <p>The implementations are {@link java.io.IOException}s (callers of OkHttp and Retrofit already
 * handle those); the failure of the last attempt is the exception's {@link Throwable#getCause() cause}.
 *
 * <p>Every failure answers one question the same way, whatever ended the operation:
 * {@link #mayHaveExecuted()}, whether the server may have acted on any of its attempts.
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
   * @param mayHaveExecuted whether the server may have acted on any attempt of the operation
   *     ({@link OperationFailure#mayHaveExecuted()})
   * @serial exclude
   */
  record Facts(String idempotencyKey, boolean idempotencyKeySent, int attempts, String reason,
      boolean mayHaveExecuted) implements java.io.Serializable {
    /**
     * Checks the fields.
     *
     * @param idempotencyKey the operation's idempotency key, whether or not it was sent; not null
     * @param idempotencyKeySent whether the key was sent with the operation's requests
     * @param attempts how many attempts were started (0 when rejected before the first)
     * @param reason the machine-readable reason; not null
     * @param mayHaveExecuted whether the server may have acted on any attempt of the operation
     * @throws NullPointerException when the key or the reason is null
     */
    public Facts {
      java.util.Objects.requireNonNull(idempotencyKey, "idempotencyKey");
      java.util.Objects.requireNonNull(reason, "reason");
    }

    /**
     * The facts of a failure after which the server did not act on any attempt
     * ({@code mayHaveExecuted} false): a refusal before anything was sent, or attempts whose
     * answers prove they were not processed.
     *
     * @param idempotencyKey the operation's idempotency key, whether or not it was sent; not null
     * @param idempotencyKeySent whether the key was sent with the operation's requests
     * @param attempts how many attempts were started (0 when rejected before the first)
     * @param reason the machine-readable reason; not null
     * @throws NullPointerException when the key or the reason is null
     */
    public Facts(String idempotencyKey, boolean idempotencyKeySent, int attempts, String reason) {
      this(idempotencyKey, idempotencyKeySent, attempts, reason, false);
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
   * Whether the operation carries its key on its requests, so that the server can deduplicate a
   * repeat. It says how the operation sends, not that a request was sent: a refusal before the
   * first attempt (breaker, throttle, limit; {@link #attempts()} 0) answers {@code true} for a keyed
   * operation too, and {@link #mayHaveExecuted()} says whether anything reached the server. When
   * {@code false} and the method is not idempotent, repeating the request is not safe
   * ({@link ResilientHttpClient#retry(OperationFailure, okhttp3.Request)} refuses it).
   *
   * @return whether the operation's requests carry its key
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

  /**
   * Whether the server may have acted on any attempt of this operation: {@code false} only when
   * the SDK knows that none was processed. The one rule, for every way an operation can end:
   *
   * <ul>
   *   <li>{@code true} when any attempt may have been processed: its request was written and its
   *       outcome is unknown (a timeout, reset or lost answer after sending; 500, 502, 504: what
   *       the classifier calls {@link Decision.Kind#RETRY_IF_IDEMPOTENT}); an attempt in flight
   *       when the deadline, a cancel or an interrupt stopped it, once its request was on the
   *       wire; an answer the classifier called a success that the caller never got (a cancel
   *       won the race); a permanent failure on an exception after the request was written; and
   *       always for {@link OutcomeUnknownException} and the failures that carry a
   *       {@link ResumableFailure#resumeToken() resume token} (the server accepted the operation).
   *   <li>{@code false} when no attempt was processed: nothing was sent (refused before the
   *       first attempt, connect or DNS failures, a network interceptor that threw), or every
   *       attempt's answer says it was not processed ({@code REFUSED_STREAM}, a GOAWAY below the
   *       stream, 503 or 429 and the other answers the classifier calls
   *       {@link Decision.Kind#RETRY}).
   * </ul>
   *
   * <p>When it is {@code true}, do not repeat the request with a new key: resume with
   * {@link #idempotencyKey()} (if {@link #idempotencyKeySent()}), or ask the server. The table of
   * every ending is in the documentation ("Exceptions").
   *
   * @return whether the server may have acted on the operation
   */
  default boolean mayHaveExecuted() {
    return facts().mayHaveExecuted();
  }
}
