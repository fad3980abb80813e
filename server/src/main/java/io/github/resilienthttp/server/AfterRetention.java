package io.github.resilienthttp.server;

import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * What the guard does with a key whose record completed longer than the retention ago (and was not
 * yet purged), and with a handler that hits the business unique constraint on a key the store had
 * forgotten.
 *
 * <ul>
 *   <li>{@link #processAgain()}: the key is treated as new and the handler runs (the default of most
 *       middlewares; safe only when the business write is idempotent on its own).
 *   <li>{@link #refuse()}: answer {@code 422} with the problem type
 *       {@link IdempotencyProblems#KEY_EXPIRED}; the client must look the outcome up.
 * </ul>
 *
 * <p>With either, {@link #onUniqueViolation} adds the business hook: when the handler throws an
 * exception caused by a unique-constraint violation (SQLState {@code 23505}, e.g. a unique index on
 * {@code payments.idempotency_key}), the function maps the request to the answer (typically the
 * existing resource, looked up by the key); an empty answer lets the exception through. Immutable.
 */
public final class AfterRetention {
  private static final AfterRetention PROCESS_AGAIN = new AfterRetention(false, null);
  private static final AfterRetention REFUSE = new AfterRetention(true, null);

  private final boolean refuse;
  private final BiFunction<String, IdempotentRequest, Optional<IdempotentResponse>> uniqueViolation;

  private AfterRetention(boolean refuse,
      BiFunction<String, IdempotentRequest, Optional<IdempotentResponse>> uniqueViolation) {
    this.refuse = refuse;
    this.uniqueViolation = uniqueViolation;
  }

  /** {@return run the handler again for an expired key} */
  public static AfterRetention processAgain() {
    return PROCESS_AGAIN;
  }

  /** {@return refuse an expired key with {@code 422}} */
  public static AfterRetention refuse() {
    return REFUSE;
  }

  /**
   * This answer plus a business unique-constraint hook.
   *
   * @param answer the key and the request to the answer, e.g. {@code 200} with the existing
   *     resource; empty to let the exception through
   * @return the new policy
   */
  public AfterRetention onUniqueViolation(
      BiFunction<String, IdempotentRequest, Optional<IdempotentResponse>> answer) {
    return new AfterRetention(refuse, Objects.requireNonNull(answer, "answer"));
  }

  boolean refuses() {
    return refuse;
  }

  BiFunction<String, IdempotentRequest, Optional<IdempotentResponse>> uniqueViolationAnswer() {
    return uniqueViolation;
  }

  @Override
  public String toString() {
    return (refuse ? "refuse" : "processAgain") + (uniqueViolation == null ? "" : " + onUniqueViolation");
  }
}
