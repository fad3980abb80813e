package io.github.resilienthttp;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retry decisions of one operation, independent of how attempts are sent and waits are made: the
 * blocking {@link RetryInterceptor} and the non-blocking {@link AsyncOperation} drive the same loop,
 * so {@code execute()} and {@code executeAsync()} have the same semantics.
 *
 * <p>Per attempt, in order (as in .NET's standard resilience handler: total deadline, retry with
 * budget, circuit breaker, attempt timeout): {@link #beforeAttempt()} (interrupt, deadline, breaker
 * permission), the driver's bulkhead permit, {@link #startAttempt(long)}, the driver sends,
 * {@link #afterAttempt} (classification, breaker record, listeners, and the decision: return, throw,
 * or retry after a delay whose budget token is already taken), and the driver waits.
 *
 * <p>Not thread-safe: one driver calls it, one step at a time (the async driver's steps may run on
 * different threads, one after the other). Not API.
 */
final class RetryLoop {
  private static final Logger log = LoggerFactory.getLogger(RetryInterceptor.class);
  static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  final OperationContext op;
  final ResilientHttpClient client;
  private final Request request;
  private final boolean oneShot;
  private final TargetCircuitBreakers.Target target;
  private final CircuitBreaker breaker;
  private IOException lastFailure;
  private int lastStatus = -1;
  /**
   * Whether any attempt so far may have been processed by the server (not only the last one): its
   * outcome was unknown. An answer such as 503 or 429 says the server did not process it.
   */
  private boolean anyMayHaveBeenProcessed;

  private int attempt;
  /** After {@link #afterAttempt} returned {@code null}: the wait before the next attempt. */
  private Duration retryDelay;
  private long attemptStart;
  private long breakerStart;
  private boolean breakerPermission;

  RetryLoop(OperationContext op, Request request) {
    this.op = op;
    this.client = op.client;
    this.request = request;
    RequestBody body = request.body();
    this.oneShot = body != null && body.isOneShot();
    this.target = client.circuitBreakers() == null
        ? null : client.circuitBreakers().forUrl(request.url());
    this.breaker = target == null ? null : target.breaker;
  }

  /**
   * Checks that need no waiting, and takes the breaker's permission.
   *
   * @return the time left before the deadline, in nanoseconds
   */
  long beforeAttempt() throws IOException {
    if (Thread.currentThread().isInterrupted()) {
      throw interrupted();
    }
    if (op.isCanceled()) {
      throw canceled(lastFailure);
    }
    long remaining = op.remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      throw deadlineExceeded("deadline passed before the next attempt", lastFailure);
    }
    int next = op.attempts() + 1;
    if (next == 1) {
      client.listeners().operationStarted(op);
    }
    if (breaker != null) {
      if (!breaker.tryAcquirePermission()) {
        client.listeners().circuitBreakerRejected(op, breaker.getName(), next);
        throw unknownIfAnyOutcomeUnknown(new CircuitBreakerOpenException(op.key(), op.keySent,
            next - 1, breaker.getName(), target.waitLeft(),
            lastFailure != null ? lastFailure : lastStatusNote(lastStatus)));
      }
      breakerPermission = true;
    }
    return remaining;
  }

  /**
   * The bulkhead had no permit in time: give the breaker's permission back and fail. When the wait
   * was cut short by the deadline (not by the bulkhead's own maximum wait), the operation failed
   * because of its deadline: {@link DeadlineExceededException}, caused by the bulkhead's refusal.
   */
  IOException bulkheadRejected(long waitedNanos, boolean cutByDeadline) {
    releaseBreakerPermission();
    int next = op.attempts() + 1;
    client.listeners().bulkheadRejected(op, next);
    BulkheadFullException full = new BulkheadFullException(op.key(), op.keySent, next - 1,
        client.bulkheadGate().bulkhead().getName(), BulkheadGate.toDuration(waitedNanos),
        lastFailure);
    if (cutByDeadline) {
      return deadlineExceeded("deadline passed while waiting for a bulkhead permit", full);
    }
    return unknownIfAnyOutcomeUnknown(full);
  }

  /** How long an attempt may wait for a bulkhead permit: stops just before the deadline. */
  static long bulkheadWaitNanos(long remainingNanos) {
    return Math.max(0, remainingNanos - MIN_ATTEMPT_NANOS);
  }

  /** Interrupted while waiting for a permit or a retry: give the permission back, keep the flag. */
  OperationInterruptedException interrupted() {
    releaseBreakerPermission();
    return new OperationInterruptedException(op.key(), op.keySent, op.attempts(), lastFailure);
  }

  /**
   * Starts an attempt.
   *
   * @return the request to send; the network layer finds the attempt's state through the
   *     operation's context tag ({@link OperationContext#startAttempt})
   */
  Request startAttempt(long remainingNanos) {
    attempt = op.startAttempt(remainingNanos);
    if (attempt == 1) {
      // Only attempts that are really sent fund the budget: rejected operations are not traffic.
      client.retryBudget().onFirstAttempt();
    }
    client.listeners().attemptStarted(op, attempt);
    // The clock reading that gave remainingNanos (one nanoTime call fewer per attempt).
    attemptStart = op.deadlineNanos - remainingNanos;
    breakerStart = breaker == null ? 0 : client.systemTime() ? attemptStart : System.nanoTime();
    return request;
  }

  /**
   * Ends the attempt that {@link #startAttempt} began and decides what comes next.
   *
   * @param response the attempt's response, or {@code null}
   * @param failure the attempt's exception, or {@code null}
   * @param callCanceled whether the attempt's call was canceled (by the user or at the deadline)
   * @return the response to return, or {@code null} to retry after {@link #retryDelay()} (its
   *     budget token already taken)
   * @throws IOException when the operation ends with a failure
   */
  Response afterAttempt(Response response, IOException failure, boolean callCanceled)
      throws IOException {
    try {
      if (Thread.currentThread().isInterrupted()) {
        closeQuietly(response);
        throw new OperationInterruptedException(op.key(), op.keySent, attempt, failure);
      }
      if (callCanceled || op.isCanceled()) {
        closeQuietly(response);
        if (op.realDeadlinePassed() || op.remainingNanos() <= 0) {
          recordFailure(failure);
          throw deadlineExceeded("deadline passed during attempt " + attempt, failure);
        }
        throw canceled(failure);
      }
      if (failure != null && op.remainingNanos() <= 0) {
        recordFailure(failure);
        throw deadlineExceeded("deadline passed during attempt " + attempt, failure);
      }

      AttemptOutcome outcome = new AttemptOutcome(request, response, failure, attempt,
          op.attemptMayHaveReachedServer(), op, client.timeSource());
      Decision decision;
      try {
        decision = classify(client.classifier(), outcome);
        if (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT) {
          anyMayHaveBeenProcessed = true;
        }
        record(decision, response, failure);
        report(decision, response, failure);
      } catch (RuntimeException | Error e) {
        // A classifier bug (or an Error): the response is not returned, so it is closed here.
        closeQuietly(response);
        throw e;
      }
      return decide(decision, response, failure);
    } finally {
      releaseBreakerPermission();
    }
  }

  /**
   * The wait before the next attempt, after {@link #afterAttempt} returned {@code null}.
   *
   * @return the wait before the next attempt
   */
  Duration retryDelay() {
    return retryDelay;
  }

  private Response decide(Decision decision, Response response, IOException failure)
      throws IOException {
    RetryPolicy policy = client.retryPolicy();
    op.lastReason = decision.reason();
    if (decision.kind() == Decision.Kind.SUCCESS) {
      op.lastSuccess = true;
      return response;
    }
    boolean retryable = decision.kind() == Decision.Kind.RETRY
        || (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT && op.idempotent);
    op.lastRetryable = retryable;
    if (!retryable) {
      if (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT) {
        closeQuietly(response);
        throw outcomeUnknown(decision.reason(),
            "the server may have processed it, and the operation is not idempotent (no"
                + " idempotency key was sent), so it was not retried", response, failure);
      }
      if (response != null) {
        return response;
      }
      throw new ResilientHttpException("permanent failure: " + failure, op.key(), op.keySent,
          attempt, decision.reason(), failure);
    }

    // Retryable: is another attempt allowed, and when?
    if (oneShot && op.attemptMayHaveReachedServer()) {
      String message = "the request body is one-shot and cannot be sent again";
      if (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT) {
        // The server may have processed it and it cannot be resent: that is an unknown outcome,
        // as for an operation without a key, not a final answer.
        closeQuietly(response);
        throw outcomeUnknown("one-shot-body", message + "; last: " + decision, response, failure);
      }
      return giveUp(decision, "one-shot-body", message, response, failure);
    }
    if (attempt >= policy.maxAttempts()) {
      return giveUp(decision, "attempts-exhausted", "all " + attempt + " attempts failed",
          response, failure);
    }
    Duration delay = policy.backoff().delay(attempt, client.random());
    if (delay == null || delay.isNegative()) {
      closeQuietly(response);
      throw new IllegalStateException("backoff " + policy.backoff() + " returned " + delay
          + " for retry " + attempt + "; a backoff must return a duration >= 0");
    }
    boolean fromRetryAfter = false;
    if (decision.retryAfter().isPresent()) {
      Duration retryAfter = decision.retryAfter().get();
      if (retryAfter.compareTo(policy.maxRetryAfter()) > 0) {
        return giveUp(decision, "retry-after-too-long", "the server asked to wait " + retryAfter
            + ", more than maxRetryAfter " + policy.maxRetryAfter(), response, failure);
      }
      if (retryAfter.compareTo(delay) > 0) {
        delay = retryAfter;
        fromRetryAfter = true;
      }
    }
    if (saturatedNanos(delay) > op.remainingNanos() - MIN_ATTEMPT_NANOS) {
      op.lastReason = "deadline";
      if (response != null) {
        return response;
      }
      throw deadlineExceeded("the next retry could not start before the deadline (wait "
          + delay.toMillis() + " ms)", failure);
    }
    if (breaker != null && isOpen(breaker)) {
      // The breaker opened during this attempt: stop now rather than wait for a rejection.
      client.listeners().circuitBreakerRejected(op, breaker.getName(), attempt + 1);
      op.lastReason = "circuit-breaker-open";
      if (response != null) {
        return response;
      }
      throw unknownIfAnyOutcomeUnknown(new CircuitBreakerOpenException(op.key(), op.keySent,
          attempt, breaker.getName(), target.waitLeft(), failure));
    }
    // The token is taken before the wait, so operations waiting in backoff cannot overshoot.
    if (!client.retryBudget().tryAcquireRetry()) {
      client.listeners().retryBudgetRefused(op, attempt);
      op.lastReason = RetryBudgetExhaustedException.REASON;
      if (response != null) {
        return response;
      }
      throw unknownIfAnyOutcomeUnknown(new RetryBudgetExhaustedException(
          "retry budget exhausted; not retrying after " + decision, op.key(), op.keySent, attempt,
          RetryBudgetExhaustedException.REASON, failure));
    }

    lastStatus = response != null ? response.code() : -1;
    closeQuietly(response);
    lastFailure = failure;
    client.listeners().retryScheduled(op, attempt + 1, delay, fromRetryAfter);
    retryDelay = delay;
    return null;
  }

  private void report(Decision decision, Response response, IOException failure) {
    if (client.listeners().isEmpty() && !log.isDebugEnabled()) {
      return;
    }
    Duration duration = Duration.ofNanos(client.timeSource().nanoTime() - attemptStart);
    int status = response != null ? response.code() : -1;
    client.listeners().attemptEnded(op, attempt, status, failure, decision, duration);
    if (response != null) {
      if (op.keySent && status == 409 && decision.isRetryable()) {
        client.listeners().inProgress(op, attempt);
      }
      String replayed = response.header(client.replayHeader());
      if (replayed != null && replayed.trim().equalsIgnoreCase("true")) {
        client.listeners().replayDetected(op, attempt);
      }
    }
    if (log.isDebugEnabled()) {
      log.debug("{} {} key={}… attempt {}/{} ({}): {} -> {} in {} ms", request.method(),
          request.url().host(), op.info().shortKey(), attempt, client.retryPolicy().maxAttempts(),
          attempt == 1 ? "first" : "retry", status > 0 ? "status " + status : String.valueOf(failure),
          decision, duration.toMillis());
    }
  }

  /**
   * The classifier's decision is the single source of truth for the breaker: retryable and
   * outcome-unknown attempts are failures; successes and permanent answers (the server is healthy)
   * are successes; a permanent exception is a failure.
   */
  private void record(Decision decision, Response response, IOException failure) {
    if (!breakerPermission) {
      return;
    }
    breakerPermission = false;
    long nanos = System.nanoTime() - breakerStart;
    boolean healthy = decision.kind() == Decision.Kind.SUCCESS
        || (decision.kind() == Decision.Kind.FAIL && response != null);
    if (healthy) {
      breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
    } else {
      breaker.onError(nanos, TimeUnit.NANOSECONDS,
          failure != null ? failure : new RetryableStatus(response.code(), decision.reason()));
    }
    target.observe();
  }

  private void recordFailure(IOException failure) {
    if (breakerPermission) {
      breakerPermission = false;
      breaker.onError(System.nanoTime() - breakerStart, TimeUnit.NANOSECONDS,
          failure != null ? failure : new RetryableStatus(-1, "deadline"));
      target.observe();
    }
  }

  /**
   * Canceled, interrupted, rejected by the bulkhead, or a bug in a classifier or interceptor: the
   * permission goes back unrecorded so that a half-open breaker never stays stuck.
   */
  void releaseBreakerPermission() {
    if (breakerPermission) {
      breakerPermission = false;
      breaker.releasePermission();
    }
  }

  private static boolean isOpen(CircuitBreaker breaker) {
    CircuitBreaker.State s = breaker.getState();
    return s == CircuitBreaker.State.OPEN || s == CircuitBreaker.State.FORCED_OPEN;
  }

  private static Decision classify(ResponseClassifier classifier, AttemptOutcome outcome) {
    Decision d = classifier.classify(outcome);
    if (d == null) {
      throw new IllegalStateException("classifier " + classifier + " returned null for " + outcome);
    }
    if (d.kind() == Decision.Kind.DEFER) {
      d = ResponseClassifier.defaults().classify(outcome);
    }
    if (d.kind() == Decision.Kind.SUCCESS && outcome.exception().isPresent()) {
      // An exception has no response to return: a "success" here can only be a classifier bug.
      return Decision.fail("success-without-response");
    }
    return d;
  }

  /** Reports the end of the operation to listeners and the log. */
  void ended(Response response, Throwable failure) {
    op.end();
    String reason = failure instanceof OperationFailure f ? f.reason()
        : failure != null ? "failed" : op.lastReason;
    OperationResult.Outcome outcome =
        OperationResult.Outcome.of(response != null && op.lastSuccess, response != null, failure);
    boolean quiet = outcome == OperationResult.Outcome.SUCCESS
        || (outcome == OperationResult.Outcome.FAILED_RESPONSE && !op.lastRetryable);
    if (quiet && client.listeners().isEmpty() && !log.isDebugEnabled()) {
      return;
    }
    OperationResult result = new OperationResult(outcome, op.attempts(), op.networkRequests(),
        Duration.ofNanos(op.elapsedNanos()), response != null ? response.code() : -1, failure,
        reason);
    if (failure instanceof OutcomeUnknownException || failure instanceof DeadlineExceededException) {
      log.warn("{} gave up: {}", op.info(), result);
    } else if (failure != null
        || (outcome == OperationResult.Outcome.FAILED_RESPONSE && op.lastRetryable)) {
      log.info("{} gave up: {}", op.info(), result);
    } else if (log.isDebugEnabled()) {
      log.debug("{} ended: {}", op.info(), result);
    }
    client.listeners().operationEnded(op, result);
  }

  /** Ends a retryable operation that may not retry: returns the last response or throws. */
  private Response giveUp(Decision decision, String why, String message, Response response,
      IOException failure) throws IOException {
    op.lastReason = why;
    if (response != null) {
      return response;
    }
    if (anyMayHaveBeenProcessed) {
      throw outcomeUnknown(why, message + "; last: " + decision, null, failure);
    }
    throw new RetriesExhaustedException(message + "; last: " + decision, op.key(), op.keySent,
        attempt, why, failure);
  }

  private OutcomeUnknownException outcomeUnknown(String reason, String message, Response response,
      IOException failure) {
    int status = response == null ? -1 : response.code();
    return new OutcomeUnknownException(
        "outcome unknown" + (status > 0 ? " (status " + status + ")" : "") + ": " + message,
        op.key(), op.keySent, attempt, reason, status, failure);
  }

  /**
   * A rejection (breaker, budget, bulkhead) after an attempt whose outcome was unknown does not mean
   * "nothing happened": the operation's outcome is unknown. The caller then gets
   * {@link OutcomeUnknownException} with the rejection's reason, the rejection attached as
   * suppressed, so that nobody retries with a new key what may already have been done.
   */
  private IOException unknownIfAnyOutcomeUnknown(ResilientHttpException rejection) {
    if (!anyMayHaveBeenProcessed) {
      return rejection;
    }
    Throwable cause = rejection.getCause() instanceof IOException ? rejection.getCause() : lastFailure;
    OutcomeUnknownException unknown = new OutcomeUnknownException("outcome unknown: an earlier"
        + " attempt may have reached the server, and then " + rejection.reason() + " stopped the"
        + " operation; query the server or resume with the same key", op.key(), op.keySent,
        op.attempts(), rejection.reason(), lastStatus, cause);
    unknown.addSuppressed(rejection);
    return unknown;
  }

  DeadlineExceededException deadlineExceeded(String message, IOException cause) {
    return new DeadlineExceededException(
        message + " (deadline " + TimeUnit.NANOSECONDS.toMillis(op.deadlineDurationNanos) + " ms)",
        op.key(), op.keySent, op.attempts(), "deadline", cause);
  }

  private ResilientHttpException canceled(IOException cause) {
    return new ResilientHttpException("operation canceled", op.key(), op.keySent, op.attempts(),
        "canceled", cause);
  }

  private static IOException lastStatusNote(int lastStatus) {
    return lastStatus > 0 ? new RetryableStatus(lastStatus, "previous-attempt") : null;
  }

  /** A duration in nanoseconds, saturating at Long.MAX_VALUE instead of overflowing. */
  static long saturatedNanos(Duration d) {
    return d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : d.toNanos();
  }

  static void closeQuietly(Response response) {
    if (response != null) {
      response.close();
    }
  }

  /**
   * Stands for a retryable or outcome-unknown HTTP answer where an exception is needed: as the
   * failure recorded in the circuit breaker. Stackless: it is data, not a bug report.
   */
  static final class RetryableStatus extends IOException {
    private static final long serialVersionUID = 1L;

    RetryableStatus(int status, String reason) {
      super("status " + status + " (" + reason + ")", null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
