package io.github.resilienthttp;

import java.time.Duration;
import java.util.Objects;

/**
 * The target's circuit breaker is open (or half-open with every probe already taken), so the attempt
 * was rejected before any byte was sent. Thrown for a first attempt, or when the breaker opened
 * between attempts and no response is left to return (the {@link #getCause() cause} is then the last
 * attempt's failure).
 *
 * <p>{@link #waitLeft()} estimates how long the breaker stays open: from the time it opened and its
 * configured wait in the open state. Callers should fail fast and not retry in a loop.
 */
public class CircuitBreakerOpenException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;

  private final String breakerName;
  private final Duration waitLeft;

  public CircuitBreakerOpenException(String idempotencyKey, boolean idempotencyKeySent,
      int attempts, String breakerName, Duration waitLeft, Throwable cause) {
    super("circuit breaker '" + breakerName + "' is open (about " + waitLeft.toMillis()
            + " ms left); nothing was sent", idempotencyKey, idempotencyKeySent, attempts,
        "circuit-breaker-open", cause);
    this.breakerName = Objects.requireNonNull(breakerName, "breakerName");
    this.waitLeft = Objects.requireNonNull(waitLeft, "waitLeft");
  }

  /** The rejecting breaker's name: {@code scheme://host:port} for per-target breakers. */
  public String breakerName() {
    return breakerName;
  }

  /** Estimated time until the breaker lets a probe through; zero when unknown or already due. */
  public Duration waitLeft() {
    return waitLeft;
  }
}
