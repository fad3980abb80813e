package io.github.resilienthttp;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import okhttp3.Response;

/**
 * How an operation ended, as reported to {@link OperationListener#operationEnded}, and, for a
 * returned response, as {@link #of(Response)} tells the caller. Immutable.
 */
public final class OperationResult {

  /** The ways an operation ends. */
  public enum Outcome {
    /** The classifier called the final response a success. */
    SUCCESS,
    /** A final response that is not a success was returned (permanent, or the last retryable one). */
    FAILED_RESPONSE,
    /** {@link OutcomeUnknownException}. */
    OUTCOME_UNKNOWN,
    /** {@link RetriesExhaustedException}. */
    RETRIES_EXHAUSTED,
    /** {@link DeadlineExceededException}. */
    DEADLINE_EXCEEDED,
    /** {@link RetryBudgetExhaustedException}. */
    BUDGET_EXHAUSTED,
    /** {@link CircuitBreakerOpenException}. */
    CIRCUIT_OPEN,
    /** {@link BulkheadFullException}. */
    BULKHEAD_FULL,
    /** {@link OperationInterruptedException}. */
    INTERRUPTED,
    /** Canceled by {@link Operation#cancel()} or by cancelling the future of an async operation. */
    CANCELED,
    /** Any other failure ({@link ResilientHttpException}: permanent, or canceled). */
    FAILED;

    /**
     * The outcome of an operation that returned a response (a success or not) or threw.
     *
     * @param success whether the response was a success
     * @param returnedResponse whether the operation returned a response
     * @param failure what it threw, or {@code null}
     * @return the outcome
     */
    public static Outcome of(boolean success, boolean returnedResponse, Throwable failure) {
      if (returnedResponse) {
        return success ? SUCCESS : FAILED_RESPONSE;
      }
      if (failure instanceof OutcomeUnknownException) {
        return OUTCOME_UNKNOWN;
      } else if (failure instanceof RetriesExhaustedException) {
        return RETRIES_EXHAUSTED;
      } else if (failure instanceof DeadlineExceededException) {
        return DEADLINE_EXCEEDED;
      } else if (failure instanceof RetryBudgetExhaustedException) {
        return BUDGET_EXHAUSTED;
      } else if (failure instanceof CircuitBreakerOpenException) {
        return CIRCUIT_OPEN;
      } else if (failure instanceof BulkheadFullException) {
        return BULKHEAD_FULL;
      } else if (failure instanceof OperationInterruptedException) {
        return INTERRUPTED;
      } else if (failure instanceof java.util.concurrent.CancellationException
          || (failure instanceof OperationFailure f && "canceled".equals(f.reason()))) {
        return CANCELED;
      }
      return FAILED;
    }
  }

  /**
   * How the operation that returned {@code response} ended, and why that response is final
   * ({@link #reason()}): the classifier's reason for a success (e.g. {@code status-200}) or for a
   * permanent answer (e.g. {@code status-404}, {@code idempotency-key-mismatch}),
   * {@code attempts-exhausted}, {@code deadline} (the next retry could not start before it: also
   * a {@code Retry-After} beyond the deadline), {@code retry-after-too-long} (above
   * {@link RetryPolicy#maxRetryAfter()}), {@code retry-budget-exhausted},
   * {@code circuit-breaker-open}, {@code one-shot-body}. The table is in the documentation
   * ("Exceptions").
   *
   * <p>Works for the response of {@code execute()}, of {@code executeAsync()} and of a plain call
   * on {@link ResilientHttpClient#okHttpClient()} that is not a success at the first attempt: a
   * final answer that is not a success, and a success after a retry or a hedge. The SDK returns
   * such a response with its request tagged with the result (the same body and headers in a new
   * {@code Response}). <b>A success at the first attempt is returned as OkHttp made it, and this
   * is empty for it:</b> it has nothing to explain, and the copy would cost every healthy call a
   * few hundred bytes. Also empty for a response the SDK did not return. Thread-safe.
   *
   * @param response a response that {@code execute()}, {@code executeAsync()} or a plain call
   *     returned
   * @return how its operation ended; empty for a success at the first attempt or a response that
   *     is not the SDK's
   * @throws NullPointerException when {@code response} is {@code null}
   */
  public static Optional<OperationResult> of(Response response) {
    Objects.requireNonNull(response, "response");
    return Optional.ofNullable(response.request().tag(OperationResult.class));
  }

  private final Outcome outcome;
  private final int attempts;
  private final int networkRequests;
  private final Duration elapsed;
  private final int statusCode;
  private final Throwable failure;
  private final String reason;
  private final int winningAttempt;
  private final AttemptKind winningKind;
  private final boolean mayHaveExecuted;

  /**
   * The result of an operation; made by the SDK, and usable to test a listener.
   *
   * @param outcome how it ended
   * @param attempts attempts started
   * @param networkRequests requests written to the network
   * @param elapsed how long it took
   * @param statusCode the returned status, or -1
   * @param failure what it threw, or {@code null}
   * @param reason the machine-readable reason of its end
   */
  public OperationResult(Outcome outcome, int attempts, int networkRequests, Duration elapsed,
      int statusCode, Throwable failure, String reason) {
    this(outcome, attempts, networkRequests, elapsed, statusCode, failure, reason,
        statusCode > 0 ? attempts : 0, statusCode <= 0 ? null
            : attempts == 1 ? AttemptKind.FIRST : AttemptKind.RETRY);
  }

  /**
   * The result of an operation, with the attempt whose answer was returned.
   *
   * @param outcome how it ended
   * @param attempts attempts started
   * @param networkRequests requests written to the network
   * @param elapsed how long it took
   * @param statusCode the returned status, or -1
   * @param failure what it threw, or {@code null}
   * @param reason the machine-readable reason of its end
   * @param winningAttempt the number of the attempt whose response was returned, or 0
   * @param winningKind that attempt's kind, or {@code null}
   */
  public OperationResult(Outcome outcome, int attempts, int networkRequests, Duration elapsed,
      int statusCode, Throwable failure, String reason, int winningAttempt,
      AttemptKind winningKind) {
    this(outcome, attempts, networkRequests, elapsed, statusCode, failure, reason, winningAttempt,
        winningKind, failure instanceof OperationFailure f ? f.mayHaveExecuted()
            : outcome == Outcome.SUCCESS);
  }

  /**
   * The result of an operation, saying whether the server may have acted on it; made by the SDK.
   *
   * @param outcome how it ended
   * @param attempts attempts started
   * @param networkRequests requests written to the network
   * @param elapsed how long it took
   * @param statusCode the returned status, or -1
   * @param failure what it threw, or {@code null}
   * @param reason the machine-readable reason of its end
   * @param winningAttempt the number of the attempt whose response was returned, or 0
   * @param winningKind that attempt's kind, or {@code null}
   * @param mayHaveExecuted whether the server may have acted on the operation (see
   *     {@link #mayHaveExecuted()})
   */
  public OperationResult(Outcome outcome, int attempts, int networkRequests, Duration elapsed,
      int statusCode, Throwable failure, String reason, int winningAttempt,
      AttemptKind winningKind, boolean mayHaveExecuted) {
    this.mayHaveExecuted = mayHaveExecuted;
    this.winningAttempt = winningAttempt;
    this.winningKind = winningKind;
    this.outcome = outcome;
    this.attempts = attempts;
    this.networkRequests = networkRequests;
    this.elapsed = elapsed;
    this.statusCode = statusCode;
    this.failure = failure;
    this.reason = reason;
  }

  /**
   * The attempt whose response was returned: the last one for a retried operation, the one that
   * answered first for a hedged one.
   *
   * @return its number, from 1; 0 when no response was returned
   */
  public int winningAttempt() {
    return winningAttempt;
  }

  /**
   * The kind of the attempt whose response was returned ({@link AttemptKind#HEDGE} when a hedge
   * beat the first attempt).
   *
   * @return its kind, or empty when no response was returned
   */
  public java.util.Optional<AttemptKind> winningKind() {
    return java.util.Optional.ofNullable(winningKind);
  }

  /** {@return how the operation ended} */
  public Outcome outcome() {
    return outcome;
  }

  /**
   * Logical attempts started by the SDK.
   *
   * @return logical attempts started by the SDK
   */
  public int attempts() {
    return attempts;
  }

  /**
   * Requests written to the network (attempts plus OkHttp's redirects and auth follow-ups).
   *
   * @return requests written to the network (attempts plus OkHttp's redirects and auth follow-ups)
   */
  public int networkRequests() {
    return networkRequests;
  }

  /**
   * From {@code execute()} to the end of the operation (the response body not included).
   *
   * @return the time from {@code execute()} to the end of the operation
   */
  public Duration elapsed() {
    return elapsed;
  }

  /**
   * The final response's status, or -1 when the operation ended with an exception.
   *
   * @return the final response's status, or -1 when the operation ended with an exception
   */
  public int statusCode() {
    return statusCode;
  }

  /**
   * The exception the caller got, if any.
   *
   * @return the exception the caller got, if any
   */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  /**
   * The last decision's reason, or the SDK's own (e.g. {@code deadline}).
   *
   * @return the last decision's reason, or the SDK's own (e.g
   */
  public String reason() {
    return reason;
  }

  /**
   * Whether the server may have acted on this operation, by the rule every
   * {@link OperationFailure#mayHaveExecuted()} follows: for a failure, the failure's answer; for a
   * returned response, {@code true} when it is a success or when any attempt's outcome was unknown
   * (a lost answer, a 500), {@code false} when every answer said the work was not done (503, 429
   * and the like). So a returned 503 after an attempt whose answer was lost says {@code true}:
   * retry with the same key (or look the outcome up), never with a new one.
   *
   * @return whether the server may have acted
   */
  public boolean mayHaveExecuted() {
    return mayHaveExecuted;
  }

  @Override
  public String toString() {
    return outcome + "(attempts=" + attempts + ", networkRequests=" + networkRequests + ", elapsed="
        + elapsed.toMillis() + "ms" + (statusCode > 0 ? ", status=" + statusCode : "")
        + ", reason=" + reason + (mayHaveExecuted ? ", mayHaveExecuted" : "") + ")";
  }
}
