package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.Decision;
import java.time.Duration;

/**
 * What comes after an attempt, as a pure function of the classifier's {@link Decision}, the attempt's
 * number, the policy, the time left and the breaker's state: no I/O, no clock, no user code (the
 * backoff's delay is an input), so every branch is unit-tested without sockets. The retry budget is
 * not part of it: taking a token is a side effect, done by the caller after a {@link Kind#RETRY}.
 *
 * <p>The rule, in order: a success returns; a permanent answer returns (or fails, without a
 * response); an answer that may have been processed is retried only when the operation is idempotent
 * (RFC 9110 §9.2.2: safe methods, PUT and DELETE, or an idempotency key per the IETF draft "The
 * Idempotency-Key HTTP Header Field"), otherwise its outcome is unknown; a one-shot body that may
 * have reached the server is not sent again; then the attempts, a {@code Retry-After} above
 * {@code maxRetryAfter}, the deadline (the wait plus a minimal attempt must fit in the time left) and
 * an open breaker each stop the retries. Not API.
 */
public final class RetryRule {
  private RetryRule() {}

  /** What the loop does next. */
  enum Kind {
    /** Return the response (a success, or a final answer the caller should see). */
    RETURN,
    /** A permanent failure without a response: fail with it. */
    FAIL,
    /** The server may have processed it and it must not be retried: the outcome is unknown. */
    OUTCOME_UNKNOWN,
    /** Retryable, but no retry is allowed ({@link Verdict#reason()} says why). */
    GIVE_UP,
    /** The next retry could not start before the deadline. */
    DEADLINE,
    /** The breaker opened during the attempt. */
    BREAKER_OPEN,
    /** Retry after {@link Verdict#delay()}. */
    RETRY
  }

  /**
   * A verdict: its kind, a machine-readable reason, a message for people (only on the ways out), and
   * for {@link Kind#RETRY} the wait and whether it came from {@code Retry-After}.
   */
  record Verdict(Kind kind, String reason, String message, Duration delay, boolean fromRetryAfter) {
    static Verdict of(Kind kind, String reason, String message) {
      return new Verdict(kind, reason, message, null, false);
    }
  }

  private static final Verdict RETURN = Verdict.of(Kind.RETURN, null, null);
  private static final Verdict FAIL = Verdict.of(Kind.FAIL, null, "permanent failure");

  /**
   * The first half of the rule, before any delay is known: whether the attempt's answer is final,
   * and whether a retry may be considered at all. The reason of {@link Kind#RETURN} and
   * {@link Kind#FAIL} verdicts is the decision's own.
   *
   * @param decision the classifier's decision (never {@code DEFER}: resolved by then)
   * @param attempt the attempt's number, from 1
   * @param maxAttempts the policy's maximum attempts
   * @param idempotent whether the operation may be repeated safely
   * @param resendBlocked whether the body is one-shot and the attempt may have reached the server
   * @return the verdict, or {@code null} when a retry may follow: then ask {@link #retry}
   */
  static Verdict afterAttempt(Decision decision, int attempt, int maxAttempts, boolean idempotent,
      boolean resendBlocked) {
    switch (decision.kind()) {
      case SUCCESS:
        return RETURN;
      case FAIL:
        return FAIL;
      case RETRY_IF_IDEMPOTENT:
        if (!idempotent) {
          return Verdict.of(Kind.OUTCOME_UNKNOWN, decision.reason(), "the server may have"
              + " processed it, and the operation is not idempotent (no idempotency key was sent),"
              + " so it was not retried");
        }
        break;
      default:
        break;
    }
    if (resendBlocked) {
      String message = "the request body is one-shot and cannot be sent again";
      return decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT
          ? Verdict.of(Kind.OUTCOME_UNKNOWN, "one-shot-body", message + "; last: " + decision)
          : Verdict.of(Kind.GIVE_UP, "one-shot-body", message);
    }
    if (attempt >= maxAttempts) {
      return Verdict.of(Kind.GIVE_UP, "attempts-exhausted", "all " + attempt + " attempts failed");
    }
    return null;
  }

  /**
   * The second half, for a retryable attempt with attempts left: when the retry may start, if at all.
   *
   * @param decision the classifier's decision
   * @param backoffDelay the backoff's delay before the next attempt (not negative)
   * @param maxRetryAfter the longest {@code Retry-After} the policy honours
   * @param remainingNanos the time left before the deadline
   * @param minAttemptNanos the least time an attempt needs: the deadline's floor
   * @param breakerOpen whether the target's breaker is open now
   * @return {@link Kind#RETRY} with its delay, or why not ({@link Kind#GIVE_UP},
   *     {@link Kind#DEADLINE}, {@link Kind#BREAKER_OPEN})
   */
  static Verdict retry(Decision decision, Duration backoffDelay, Duration maxRetryAfter,
      long remainingNanos, long minAttemptNanos, boolean breakerOpen) {
    Duration delay = backoffDelay;
    boolean fromRetryAfter = false;
    if (decision.retryAfter().isPresent()) {
      Duration retryAfter = decision.retryAfter().get();
      if (retryAfter.compareTo(maxRetryAfter) > 0) {
        return Verdict.of(Kind.GIVE_UP, "retry-after-too-long", "the server asked to wait "
            + retryAfter + ", more than maxRetryAfter " + maxRetryAfter);
      }
      if (retryAfter.compareTo(delay) > 0) {
        delay = retryAfter;
        fromRetryAfter = true;
      }
    }
    if (DurationMath.toNanos(delay) > remainingNanos - minAttemptNanos) {
      return Verdict.of(Kind.DEADLINE, "deadline", "the next retry could not start before the"
          + " deadline (wait " + DurationMath.toMillis(delay) + " ms)");
    }
    if (breakerOpen) {
      return Verdict.of(Kind.BREAKER_OPEN, "circuit-breaker-open", null);
    }
    return new Verdict(Kind.RETRY, decision.reason(), null, delay, fromRetryAfter);
  }
}
