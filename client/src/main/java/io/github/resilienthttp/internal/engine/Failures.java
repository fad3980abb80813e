package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.BulkheadFullException;
import io.github.resilienthttp.CircuitBreakerOpenException;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInterruptedException;
import io.github.resilienthttp.OutcomeUnknownAnswerException;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.RetriesExhaustedException;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.internal.guard.BulkheadGate;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Response;

/**
 * The one home of every exception a run ends with (breaker open, bulkhead full, budget exhausted,
 * retries exhausted, deadline, canceled, interrupted, permanent, outcome unknown), and of what the
 * run remembers to build them: the last attempt's failure and status, and whether any attempt may
 * have been processed by the server.
 *
 * <p>The rule it applies everywhere: a rejection or a stop (breaker, budget, bulkhead, interrupt,
 * attempts used up) after an attempt whose outcome was unknown does not mean "nothing happened", so
 * the caller gets {@link OutcomeUnknownException} with the rejection's reason and the rejection
 * attached as suppressed, and nobody retries with a new key what may already have been done.
 *
 * <p>Every failure says whether the server may have acted
 * ({@link io.github.resilienthttp.OperationFailure#mayHaveExecuted()}), by one rule: yes when any
 * attempt may have been processed ({@link #anyMayHaveBeenProcessed}, which the wrapping above
 * already turns into outcome unknown), or when the attempt that ends the run may have acted: it
 * was on the wire when a cancel or the deadline cut it, it was a success the caller never got,
 * or a permanent failure after its request was written. The {@code acted} arguments below carry
 * that last part; every other ending is built with what the run remembers.
 *
 * <p>It sits between {@link Execution} and {@link RetryLoop} in the chain of classes that make an
 * operation's one engine object, so that this memory costs no object of its own per run. Not
 * thread-safe: the loop's driver calls it, one step at a time. Not API.
 */
abstract class Failures extends Execution {
  /** The last attempt's failure, or {@code null}: the cause of a later rejection. */
  IOException lastFailure;
  /** The last attempt's status, or -1. */
  int lastStatus = -1;
  /**
   * Whether any attempt so far may have been processed by the server (not only the last one): its
   * outcome was unknown. An answer such as 503 or 429 says the server did not process it.
   */
  boolean anyMayHaveBeenProcessed;

  Failures(ClientRuntime client) {
    super(client);
  }

  /** Remembers an attempt's answer for the endings that follow it. */
  final void remember(Response response, IOException failure) {
    lastFailure = failure;
    lastStatus = response != null ? response.code() : -1;
  }

  /**
   * The facts of an ending: the operation's key, {@code attempts}, {@code reason}, and whether
   * the server may have acted (an earlier attempt, or the ending one: {@code acted}).
   */
  final OperationFailure.Facts facts(int attempts, String reason, boolean acted) {
    return new OperationFailure.Facts(key(), keySent(), attempts, reason,
        acted || anyMayHaveBeenProcessed);
  }

  /** The operation was cancelled between attempts. */
  final ResilientHttpException canceled(IOException cause) {
    return canceled(cause, false);
  }

  /**
   * The operation was cancelled.
   *
   * @param acted whether the attempt the cancel stopped (or whose answer it discarded) may have
   *     been processed
   */
  final ResilientHttpException canceled(IOException cause, boolean acted) {
    if (runtime().lifecycle().isClosed()) {
      // The client's close stopped it: between attempts, or closeNow() cut the one in flight.
      ResilientHttpException closed = new ResilientHttpException(
          facts(attempts(), ClientLifecycle.REASON, acted), "client closed: the operation was"
          + " stopped after " + attempts() + " attempt(s)", cause);
      return anyMayHaveBeenProcessed || acted
          ? unknownAfter(closed, ClientLifecycle.REASON, cause) : closed;
    }
    return new ResilientHttpException(facts(attempts(), "canceled", acted),
        "operation canceled", cause);
  }

  /**
   * The wrapped client's dispatcher refused attempt {@code attempt}: its executor is shut down.
   * Not retried (every retry would be refused the same way); nothing was sent by it.
   */
  final IOException dispatcherShutDown(IOException cause, int attempt) {
    ResilientHttpException e = new ResilientHttpException(
        facts(attempts(), DispatcherShutdown.REASON, false), "the wrapped OkHttpClient's"
        + " dispatcher is shut down: its executor rejected attempt " + attempt + ", which was not"
        + " sent (not retried: every retry would be rejected too)", cause);
    return anyMayHaveBeenProcessed ? unknownAfter(e, DispatcherShutdown.REASON, cause) : e;
  }

  /** The user's scheduler refused a wait of the run ({@code what}). */
  final ResilientHttpException schedulerRejected(String what, Throwable cause) {
    return new ResilientHttpException(facts(attempts(), "scheduler-rejected", false),
        "the scheduler rejected " + what, cause);
  }

  /**
   * Interrupted while waiting for a permit or a retry: the interrupt flag stays set. When an
   * earlier attempt may have reached the server, the caller gets {@link OutcomeUnknownException}
   * (reason {@code interrupted}, the interrupt attached as suppressed).
   */
  final IOException interrupted() {
    return interrupted(false);
  }

  /**
   * The same, when attempts may be in flight.
   *
   * @param acted whether an attempt in flight may have been processed
   */
  final IOException interrupted(boolean acted) {
    OperationInterruptedException e = new OperationInterruptedException(
        facts(attempts(), "interrupted", acted), lastFailure);
    return anyMayHaveBeenProcessed ? unknownAfter(e, "interrupted", lastFailure) : e;
  }

  /** The deadline passed between attempts, or the next retry could only start after it. */
  final DeadlineExceededException deadlineExceeded(String message, IOException cause) {
    return deadlineExceeded(message, cause, false);
  }

  /**
   * The deadline passed.
   *
   * @param acted whether an attempt in flight when it passed may have been processed
   */
  final DeadlineExceededException deadlineExceeded(String message, IOException cause,
      boolean acted) {
    return new DeadlineExceededException(facts(attempts(), "deadline", acted), message
        + " (deadline " + TimeUnit.NANOSECONDS.toMillis(deadlineDurationNanos())
        + " ms)", cause);
  }

  /** The breaker refused the attempt after {@code attempts}, or opened during the last one. */
  final IOException breakerOpen(int attempts, TargetCircuitBreakers.Target target,
      IOException cause) {
    return unknownIfAnyOutcomeUnknown(new CircuitBreakerOpenException(key(),
        keySent(), attempts, target.breaker().getName(), target.waitLeft(), cause));
  }

  /** The breaker refused the next attempt, before it started. */
  final IOException breakerRejected(TargetCircuitBreakers.Target target) {
    return breakerOpen(attempts(), target,
        lastFailure != null ? lastFailure : lastStatusNote(lastStatus));
  }

  /**
   * The bulkhead had no permit in time. When the wait was cut short by the deadline (not by the
   * bulkhead's own maximum wait), the operation failed because of its deadline:
   * {@link DeadlineExceededException}, caused by the bulkhead's refusal.
   */
  final IOException bulkheadFull(BulkheadGate gate, long waitedNanos, boolean cutByDeadline) {
    BulkheadFullException full = new BulkheadFullException(key(), keySent(),
        attempts(), gate.bulkhead().getName(), BulkheadGate.toDuration(waitedNanos),
        lastFailure);
    if (cutByDeadline) {
      return deadlineExceeded("deadline passed while waiting for a bulkhead permit", full);
    }
    return unknownIfAnyOutcomeUnknown(full);
  }

  /** The retry budget refused the retry after {@code attempt}. */
  final IOException budgetExhausted(String decision, int attempt, IOException failure) {
    return unknownIfAnyOutcomeUnknown(new RetryBudgetExhaustedException(
        "retry budget exhausted; not retrying after " + decision, key(), keySent(),
        attempt, RetryBudgetExhaustedException.REASON, failure));
  }

  /**
   * The classifier called the attempt's exception permanent.
   *
   * @param acted whether the attempt's request was written before it failed
   */
  final ResilientHttpException permanent(IOException failure, int attempt, String reason,
      boolean acted) {
    return new ResilientHttpException(facts(attempt, reason, acted),
        "permanent failure: " + failure, failure);
  }

  /** A retryable operation that may not retry, without a response: retries exhausted or unknown. */
  final IOException gaveUp(String why, String message, IOException failure, int attempt) {
    if (anyMayHaveBeenProcessed) {
      return outcomeUnknown(why, message, null, failure, attempt);
    }
    return new RetriesExhaustedException(message, key(), keySent(), attempt, why,
        failure);
  }

  /** The server may have processed the attempt, and it may not be retried. */
  final OutcomeUnknownException outcomeUnknown(String reason, String message, Response response,
      IOException failure, int attempt) {
    int status = response == null ? -1 : response.code();
    return new OutcomeUnknownException(
        "outcome unknown" + (status > 0 ? " (status " + status + ")" : "") + ": " + message,
        key(), keySent(), attempt, reason, status, failure);
  }

  /**
   * A rejection (breaker, budget, bulkhead) after an attempt whose outcome was unknown: the
   * operation's outcome is unknown (the class comment's rule).
   */
  final IOException unknownIfAnyOutcomeUnknown(ResilientHttpException rejection) {
    if (!anyMayHaveBeenProcessed) {
      return rejection;
    }
    Throwable cause = rejection.getCause() instanceof IOException ? rejection.getCause()
        : lastFailure;
    return unknownAfter(rejection, rejection.reason(), cause);
  }

  private OutcomeUnknownException unknownAfter(Throwable stop, String reason, Throwable cause) {
    OutcomeUnknownException unknown = new OutcomeUnknownException("outcome unknown: an earlier"
        + " attempt may have reached the server, and then " + reason + " stopped the"
        + " operation; query the server or resume with the same key", key(),
        keySent(), attempts(), reason, lastStatus, cause);
    unknown.addSuppressed(stop);
    return unknown;
  }

  /**
   * The operation ends on a 409 about an earlier attempt that may have reached the server
   * ({@link io.github.resilienthttp.internal.classify.AnswerInContext#endsUnknown}), with a copy of
   * the answer (the caller closes the response).
   *
   * @param why what stopped the retries
   */
  final OutcomeUnknownAnswerException unknownAnswer(String why, Response response, int attempts) {
    byte[] body;
    try {
      body = response.peekBody(OutcomeUnknownAnswerException.MAX_BODY_BYTES).bytes();
    } catch (IOException | RuntimeException unreadable) {
      body = new byte[0];
    }
    return new OutcomeUnknownAnswerException("outcome unknown (status 409): the answer to the"
        + " retry is about an earlier attempt that may have reached the server (in progress, or a"
        + " replay), and " + why + " stopped the operation; resume with the same key or look the"
        + " outcome up", key(), true, attempts, why, response.code(), response.headers(), body);
  }

  private static IOException lastStatusNote(int lastStatus) {
    return lastStatus > 0 ? new RetryLoop.RetryableStatus(lastStatus, "previous-attempt") : null;
  }
}
