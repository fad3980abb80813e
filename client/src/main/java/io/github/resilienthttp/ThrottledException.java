package io.github.resilienthttp;

import java.util.Objects;

/**
 * The client's adaptive throttling ({@link AdaptiveThrottlingPolicy}) refused the attempt locally:
 * the target has recently refused too much of what was asked, so this attempt was <em>not
 * sent</em> (the server never saw it; for the refused attempt itself the server cannot have acted).
 * {@link #attempts()} counts the attempts that were started before it; the {@link #getCause() cause}
 * is the previous attempt's failure, if any. After an earlier attempt whose outcome is unknown, the
 * caller gets {@link OutcomeUnknownException} (reason {@value #REASON}) with this exception attached
 * as suppressed instead, as for the breaker and the bulkhead.
 *
 * <p>Callers should treat it like a {@code 503} they did not have to wait for: fail fast, shed
 * the work or try later; retrying in a loop defeats the throttling.
 */
public class ThrottledException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;
  /** The failure's {@link #reason() reason}. */
  public static final String REASON = "throttled";

  /** The target that was throttled: {@code scheme://host:port}. */
  private final String target;
  /** The probability with which the attempt was refused. */
  private final double rejectProbability;

  /**
   * Creates the exception.
   *
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started before the refused one
   * @param target the throttled target, {@code scheme://host:port}
   * @param rejectProbability the probability of refusal at the time, 0 to 1
   * @param cause the previous attempt's failure, may be {@code null}
   */
  public ThrottledException(String idempotencyKey, boolean idempotencyKeySent, int attempts,
      String target, double rejectProbability, Throwable cause) {
    super("adaptive throttling refused the attempt to " + target + " (refusing "
        + Math.round(rejectProbability * 100) + " %); nothing was sent", idempotencyKey,
        idempotencyKeySent, attempts, REASON, cause);
    this.target = Objects.requireNonNull(target, "target");
    this.rejectProbability = rejectProbability;
  }

  /**
   * The throttled target.
   *
   * @return {@code scheme://host:port}
   */
  public String target() {
    return target;
  }

  /**
   * The probability with which attempts to the target were refused when this one was.
   *
   * @return 0 to just under 1
   */
  public double rejectProbability() {
    return rejectProbability;
  }
}
