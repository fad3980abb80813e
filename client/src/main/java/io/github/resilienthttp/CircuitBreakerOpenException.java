package io.github.resilienthttp;

import java.time.Duration;
import java.util.Objects;

/**
 * The target's circuit breaker is open (or half-open with every probe already taken), so the attempt
 * was rejected before any byte was sent. Thrown for a first attempt, or when the breaker opened
 * between attempts, no response is left to return and no earlier attempt had an unknown outcome
 * (the {@link #getCause() cause} is then the last attempt's failure); after an attempt whose outcome
 * was unknown, the caller gets {@link OutcomeUnknownException} with this exception attached as
 * suppressed instead.
 *
 * <p>{@link #waitLeft()} estimates how long the breaker stays open: from the time it opened and its
 * configured wait in the open state. Callers should fail fast and not retry in a loop.
 */
public class CircuitBreakerOpenException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;

  /** The rejecting breaker's name. */
  private final String breakerName;
  /** Estimated time until the breaker lets a probe through. */
  private final Duration waitLeft;

  /**
   * Creates the exception.
   *
   * @param idempotencyKey the operation's idempotency key
   * @param idempotencyKeySent whether the key was sent with the requests
   * @param attempts how many attempts were started
   * @param breakerName the rejecting breaker's name
   * @param waitLeft estimated time until the breaker lets a probe through
   * @param cause the last attempt's failure, may be {@code null}
   */
  public CircuitBreakerOpenException(String idempotencyKey, boolean idempotencyKeySent,
      int attempts, String breakerName, Duration waitLeft, Throwable cause) {
    super("circuit breaker '" + breakerName + "' is open (about " + waitLeft.toMillis()
            + " ms left); nothing was sent", idempotencyKey, idempotencyKeySent, attempts,
        "circuit-breaker-open", cause);
    this.breakerName = Objects.requireNonNull(breakerName, "breakerName");
    this.waitLeft = Objects.requireNonNull(waitLeft, "waitLeft");
  }

  /**
   * The rejecting breaker's name: {@code scheme://host:port} for per-target breakers.
   *
   * @return the rejecting breaker's name: {@code scheme://host:port} for per-target breakers
   */
  public String breakerName() {
    return breakerName;
  }

  /**
   * Estimated time until the breaker lets a probe through; zero when unknown or already due.
   *
   * @return the estimated wait; zero when unknown or already due
   */
  public Duration waitLeft() {
    return waitLeft;
  }
}
