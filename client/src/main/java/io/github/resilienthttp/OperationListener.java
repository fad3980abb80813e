package io.github.resilienthttp;

import java.io.IOException;
import java.time.Duration;

/**
 * Receives what the retry machinery does, so operators can tell first attempts, retries, idempotent
 * replays, in-progress answers and final failures apart. Register with
 * {@link ResilientHttpClient.Builder#addListener(OperationListener)}.
 *
 * <p>Every method has a no-op default. Methods are called synchronously on the thread running the
 * operation, in this order per operation: {@code operationStarted}, then per attempt
 * {@code attemptStarted}, {@code attemptEnded} (and {@code replayDetected} / {@code inProgress} when
 * they apply), then {@code retryScheduled} or one of the rejection events, and finally
 * {@code operationEnded}. Implementations must be thread-safe and fast. A listener that throws never
 * breaks an operation: the exception is logged at WARN and ignored.
 */
public interface OperationListener {

  /**
   * The operation is about to make its first attempt.
   *
   * @param operation the operation
   */
  default void operationStarted(OperationInfo operation) {}

  /**
   * An attempt is about to be sent.
   *
   * @param attempt 1 for the first attempt; greater than 1 for a retry
   * @param operation the operation
   */
  default void attemptStarted(OperationInfo operation, int attempt) {}

  /**
   * An attempt is about to be sent, with why: a first attempt, a retry, or a hedge. The default
   * calls {@link #attemptStarted(OperationInfo, int)}, so listeners written before hedging keep
   * working; override this one to tell the kinds apart. Called instead of, not besides, the
   * two-argument method.
   *
   * @param operation the operation
   * @param attempt the attempt's number, from 1 (hedges are numbered in the order they start)
   * @param kind why it is sent
   */
  default void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
    attemptStarted(operation, attempt);
  }

  /**
   * An attempt ended and was classified.
   *
   * @param statusCode the response's status, or -1 when the attempt failed with {@code failure}
   * @param failure the attempt's exception, or {@code null}
   * @param duration from sending to the response headers (or the failure)
   * @param operation the operation
   * @param attempt the attempt number, 1 for the first
   * @param decision the classifier's decision
   */
  default void attemptEnded(OperationInfo operation, int attempt, int statusCode,
      IOException failure, Decision decision, Duration duration) {}

  /**
   * An attempt ended and was classified, with its kind (first, retry or hedge). The default calls
   * {@link #attemptEnded(OperationInfo, int, int, IOException, Decision, Duration)}; override this
   * one to tell the kinds apart. Called instead of, not besides, the other.
   *
   * @param operation the operation
   * @param attempt the attempt number, from 1
   * @param kind why the attempt was sent
   * @param statusCode the response's status, or -1 when the attempt failed with {@code failure}
   * @param failure the attempt's exception, or {@code null}
   * @param decision the classifier's decision
   * @param duration from sending to the response headers (or the failure)
   */
  default void attemptEnded(OperationInfo operation, int attempt, AttemptKind kind, int statusCode,
      IOException failure, Decision decision, Duration duration) {
    attemptEnded(operation, attempt, statusCode, failure, decision, duration);
  }

  /**
   * A retry will start after {@code delay}.
   *
   * @param fromRetryAfter true when the delay is the server's {@code Retry-After} (longer than the
   *     backoff)
   * @param operation the operation
   * @param nextAttempt the number of the attempt that will start
   * @param delay the wait before it
   */
  default void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
      boolean fromRetryAfter) {}

  /**
   * The retry budget refused a retry after {@code attempt}.
   *
   * @param operation the operation
   * @param attempt the attempt after which no retry was allowed
   */
  default void retryBudgetRefused(OperationInfo operation, int attempt) {}

  /**
   * The circuit breaker rejected attempt {@code attempt} before sending.
   *
   * @param operation the operation
   * @param breakerName the rejecting breaker's name
   * @param attempt the rejected attempt's number
   */
  default void circuitBreakerRejected(OperationInfo operation, String breakerName, int attempt) {}

  /**
   * The bulkhead had no permit for attempt {@code attempt}.
   *
   * @param operation the operation
   * @param attempt the rejected attempt's number
   */
  default void bulkheadRejected(OperationInfo operation, int attempt) {}

  /**
   * The client's adaptive throttling ({@link AdaptiveThrottlingPolicy}) refused attempt
   * {@code attempt} locally: it was not sent. Called once per refused attempt (a first attempt, a
   * retry or a hedge), before the operation ends ({@link ThrottledException}); a refused hedge does
   * not end the operation.
   *
   * @param operation the operation
   * @param attempt the refused attempt's number, 1 for the first
   */
  default void throttled(OperationInfo operation, int attempt) {}

  /**
   * The target's adaptive concurrency limit ({@link ConcurrencyLimitPolicy}) refused attempt
   * {@code attempt}: it was not sent. Called once per refused attempt, before the operation ends
   * ({@link ConcurrencyLimitExceededException}); a refused hedge does not end the operation. Not
   * reported as {@link #bulkheadRejected} as well.
   *
   * @param operation the operation
   * @param attempt the refused attempt's number, 1 for the first
   */
  default void limited(OperationInfo operation, int attempt) {}

  /**
   * Attempt {@code attempt} waits {@code wait} before it is sent, because the target's last answer
   * said its rate-limit quota is used up until then
   * ({@link ResilientHttpClient.Builder#rateLimitPacing(boolean)}). Called before the wait; when
   * the wait would pass the deadline the attempt is not made and this is not called.
   *
   * @param operation the operation
   * @param attempt the paced attempt's number, 1 for the first
   * @param wait how long it waits, more than zero
   */
  default void paced(OperationInfo operation, int attempt, Duration wait) {}

  /**
   * The server answered attempt {@code attempt} with a replay of an earlier result for the same key
   * (its replay header, {@code Idempotent-Replayed: true} by default).
   *
   * @param operation the operation
   * @param attempt the attempt number, 1 for the first
   */
  default void replayDetected(OperationInfo operation, int attempt) {}

  /**
   * The server answered 409: an earlier request with the same key is still in progress.
   *
   * @param operation the operation
   * @param attempt the attempt number, 1 for the first
   */
  default void inProgress(OperationInfo operation, int attempt) {}

  /**
   * The operation ended: with a response returned to the caller, or an exception thrown.
   *
   * @param operation the operation
   * @param result how it ended
   */
  default void operationEnded(OperationInfo operation, OperationResult result) {}

  /**
   * The server accepted an asynchronous operation ({@code 202}) and the SDK will poll its status
   * resource ({@link Operation#awaitCompletion(AsyncOperationPolicy)}), or a resume continues the wait.
   * Store {@code token} ({@link ResumeToken#toText()}) to continue after a crash.
   *
   * @param operation the submit
   * @param token the resume token
   */
  default void asyncOperationAccepted(OperationInfo operation, ResumeToken token) {}

  /**
   * Poll {@code poll} of an asynchronous operation's status will start after {@code delay}. Each poll
   * is a GET operation of its own, whose first attempt is reported with {@link AttemptKind#POLL}.
   *
   * @param operation the submit
   * @param poll the poll's number, from 1
   * @param delay the wait before it
   * @param fromRetryAfter whether the delay is the server's {@code Retry-After}
   */
  default void pollScheduled(OperationInfo operation, int poll, Duration delay,
      boolean fromRetryAfter) {}

  /**
   * Poll {@code poll} read the asynchronous operation's status.
   *
   * @param operation the submit
   * @param poll the poll's number, from 1
   * @param status what the status contract read
   */
  default void pollCompleted(OperationInfo operation, int poll, PollStatus status) {}

  /**
   * A resume found its key older than the configured key retention: the server may have forgotten it,
   * so that a re-submit may run the work again. Also logged at WARN.
   *
   * @param operation the resumed operation
   * @param token the token
   * @param keyAge how old the key is
   * @param refused whether the resume was refused ({@link KeyRetentionExceededException}) or went on
   */
  default void keyRetentionExceeded(OperationInfo operation, ResumeToken token, Duration keyAge,
      boolean refused) {}

  /**
   * An outcome query ({@link Operation#outcomeQuery(OutcomeQueryPolicy)}) answered, or could not
   * (then {@code CANNOT_TELL}). The query's own attempts are reported with {@link AttemptKind#QUERY}.
   *
   * @param operation the operation whose outcome was unknown
   * @param answer what the query said
   */
  default void outcomeQueried(OperationInfo operation, OutcomeQuery.Answer answer) {}

  /**
   * An operation ended without a definite outcome and its intent was parked in an {@link Outbox}
   * ({@link Operation#parkIndefiniteOutcomes(Outbox)}). Its failure is still thrown to the caller.
   *
   * @param operation the operation
   * @param entry what was parked
   */
  default void operationParked(OperationInfo operation, OutboxEntry entry) {}

  /**
   * An {@link OutboxResumer} tried a parked intent.
   *
   * @param operation the intent
   * @param entry the entry as it was before this try
   * @param outcome {@code resumed} (done; removed), {@code failed} (a definite failure; removed),
   *     {@code rescheduled} (still open; due again later), {@code abandoned} (out of tries or not
   *     safe to re-send; removed, for manual handling), {@code lost} (another resumer took the
   *     intent over before this one settled it; left to that one)
   */
  default void parkedOperationTried(OperationInfo operation, OutboxEntry entry, String outcome) {}
}
