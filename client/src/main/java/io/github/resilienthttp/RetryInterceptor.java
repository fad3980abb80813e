package io.github.resilienthttp;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retry loop: an application interceptor that calls {@code chain.proceed} once per attempt, so
 * every attempt shares the wrapped client's connection pool, dispatcher, event listener and the
 * user's own interceptors (which run per attempt, after this one).
 *
 * <p>Order per attempt, as in .NET's standard resilience handler: total deadline, then retry (with
 * budget), then circuit breaker and bulkhead, then the attempt with its timeouts shrunk to the time
 * left.
 *
 * <p>Each attempt runs with OkHttp's {@code retryOnConnectionFailure} off: OkHttp would otherwise
 * silently re-send a request after a failed pooled connection (POST included) and repeat a 408, so
 * one SDK attempt could be several server requests. {@link NetworkAttemptTracker} counts what really
 * went on the wire and stops OkHttp's last silent repeat (503 with {@code Retry-After: 0}). Not API.
 */
final class RetryInterceptor implements Interceptor {
  private static final Logger log = LoggerFactory.getLogger(RetryInterceptor.class);
  private static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  @Override
  public Response intercept(Chain chain) throws IOException {
    OperationContext op = chain.request().tag(OperationContext.class);
    if (op == null) {
      return chain.proceed(chain.request());
    }
    Listeners listeners = op.client.listeners();
    listeners.operationStarted(op.info);
    Response response;
    try {
      response = run(chain, op);
    } catch (IOException e) {
      ended(op, null, e, e instanceof OperationFailure f ? f.reason() : "failed");
      throw e;
    }
    ended(op, response, null, op.lastReason);
    return response;
  }

  private Response run(Chain chain, OperationContext op) throws IOException {
    Request request = chain.request();
    ResilientHttpClient client = op.client;
    RetryPolicy policy = client.retryPolicy();
    RequestBody body = request.body();
    boolean oneShot = body != null && body.isOneShot();
    Chain noSilentRetries = chain.withRetryOnConnectionFailure(false);
    CircuitBreaker breaker = client.circuitBreakers() == null
        ? null : client.circuitBreakers().forUrl(request.url());
    IOException lastFailure = null;
    int lastStatus = -1;

    while (true) {
      if (Thread.currentThread().isInterrupted()) {
        throw interrupted(op, lastFailure);
      }
      long remaining = op.remainingNanos();
      if (remaining < MIN_ATTEMPT_NANOS) {
        throw deadlineExceeded(op, "deadline passed before the next attempt", lastFailure);
      }
      int attempt = op.attempts() + 1;
      if (attempt == 1) {
        client.retryBudget().onFirstAttempt();
      }

      // Admission: breaker first (a rejected call costs nothing), then the bulkhead's permit.
      if (breaker != null && !breaker.tryAcquirePermission()) {
        client.listeners().circuitBreakerRejected(op.info, breaker.getName(), attempt);
        throw new CircuitBreakerOpenException(op.key, op.keySent, attempt - 1, breaker.getName(),
            client.circuitBreakers().waitLeft(breaker, Instant.now()),
            lastFailure != null ? lastFailure : lastStatusNote(lastStatus));
      }
      if (client.bulkheadGate() != null) {
        long waitStart = System.nanoTime();
        boolean admitted;
        try {
          admitted = client.bulkheadGate().acquire(remaining);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          releaseUnrecorded(breaker);
          throw interrupted(op, lastFailure);
        }
        if (!admitted) {
          releaseUnrecorded(breaker);
          client.listeners().bulkheadRejected(op.info, attempt);
          throw new BulkheadFullException(op.key, op.keySent, attempt - 1,
              client.bulkheadGate().bulkhead().getName(),
              BulkheadGate.toDuration(System.nanoTime() - waitStart), lastFailure);
        }
        remaining = op.remainingNanos();
      }

      AttemptResult result;
      try {
        result = attempt(noSilentRetries, request, op, attempt, remaining, breaker);
      } finally {
        if (client.bulkheadGate() != null) {
          client.bulkheadGate().release();
        }
      }
      Response response = result.response;
      IOException failure = result.failure;
      Decision decision = result.decision;
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
          throw outcomeUnknown(op, attempt, decision.reason(),
              "the server may have processed it, and the operation is not idempotent (no"
                  + " idempotency key was sent), so it was not retried", response, failure);
        }
        if (response != null) {
          return response;
        }
        throw new ResilientHttpException("permanent failure: " + failure, op.key, op.keySent,
            attempt, decision.reason(), failure);
      }

      // Retryable: is another attempt allowed, and when?
      if (oneShot && result.state.mayHaveReachedServer()) {
        return giveUp(op, attempt, decision, "one-shot-body",
            "the request body is one-shot and cannot be sent again", response, failure, result.state);
      }
      if (attempt >= policy.maxAttempts()) {
        return giveUp(op, attempt, decision, "attempts-exhausted",
            "all " + attempt + " attempts failed", response, failure, result.state);
      }
      Duration delay = policy.backoff().delay(attempt, client.random());
      if (delay == null || delay.isNegative()) {
        throw new IllegalStateException("backoff " + policy.backoff() + " returned " + delay
            + " for retry " + attempt + "; a backoff must return a duration >= 0");
      }
      boolean fromRetryAfter = false;
      if (decision.retryAfter().isPresent()) {
        Duration retryAfter = decision.retryAfter().get();
        if (retryAfter.compareTo(policy.maxRetryAfter()) > 0) {
          return giveUp(op, attempt, decision, "retry-after-too-long",
              "the server asked to wait " + retryAfter + ", more than maxRetryAfter "
                  + policy.maxRetryAfter(), response, failure, result.state);
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
        throw deadlineExceeded(op, "the next retry could not start before the deadline (wait "
            + delay.toMillis() + " ms)", failure);
      }
      if (breaker != null && isOpen(breaker)) {
        // The breaker opened during this attempt: stop now rather than sleep into a rejection.
        client.listeners().circuitBreakerRejected(op.info, breaker.getName(), attempt + 1);
        op.lastReason = "circuit-breaker-open";
        if (response != null) {
          return response;
        }
        throw new CircuitBreakerOpenException(op.key, op.keySent, attempt, breaker.getName(),
            client.circuitBreakers().waitLeft(breaker, Instant.now()), failure);
      }
      // The token is taken before the wait, so operations asleep in backoff cannot overshoot.
      if (!client.retryBudget().tryAcquireRetry()) {
        client.listeners().retryBudgetRefused(op.info, attempt);
        op.lastReason = "retry-budget-exhausted";
        if (response != null) {
          return response;
        }
        throw new RetryBudgetExhaustedException("retry budget exhausted; not retrying after "
            + decision, op.key, op.keySent, attempt, "retry-budget-exhausted", failure);
      }

      lastStatus = response != null ? response.code() : -1;
      closeQuietly(response);
      lastFailure = failure;
      client.listeners().retryScheduled(op.info, attempt + 1, delay, fromRetryAfter);
      try {
        client.timeSource().sleep(delay);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw interrupted(op, failure);
      }
    }
  }

  /** One attempt: send, classify, record in the breaker, tell the listeners. */
  private AttemptResult attempt(Chain chain, Request request, OperationContext op, int attempt,
      long remaining, CircuitBreaker breaker) throws IOException {
    ResilientHttpClient client = op.client;
    op.startAttempt();
    client.listeners().attemptStarted(op.info, attempt);
    AttemptState state = new AttemptState(op);
    Request attemptRequest = request.newBuilder().tag(AttemptState.class, state).build();
    Chain attemptChain = withTimeouts(chain, remaining, client.retryPolicy());
    long start = client.timeSource().nanoTime();
    long breakerStart = breaker == null ? 0 : System.nanoTime();
    boolean recorded = false;
    Response response = null;
    IOException failure = null;
    try {
      try {
        response = attemptChain.proceed(attemptRequest);
      } catch (IOException e) {
        failure = e;
      }

      if (Thread.currentThread().isInterrupted()) {
        closeQuietly(response);
        throw interrupted(op, failure);
      }
      if (chain.call().isCanceled()) {
        closeQuietly(response);
        if (op.realDeadlinePassed()) {
          recordFailure(breaker, breakerStart, failure);
          recorded = true;
          throw deadlineExceeded(op, "deadline passed during attempt " + attempt, failure);
        }
        throw new ResilientHttpException("operation canceled", op.key, op.keySent, attempt,
            "canceled", failure);
      }
      if (failure != null && op.remainingNanos() <= 0) {
        recordFailure(breaker, breakerStart, failure);
        recorded = true;
        throw deadlineExceeded(op, "deadline passed during attempt " + attempt, failure);
      }

      AttemptOutcome outcome = new AttemptOutcome(request, response, failure, attempt,
          state.mayHaveReachedServer(), op.idempotent, op.key, op.keySent, client.timeSource().now());
      Decision decision = classify(client.classifier(), outcome);
      record(breaker, breakerStart, decision, response, failure);
      recorded = true;

      Duration duration = Duration.ofNanos(client.timeSource().nanoTime() - start);
      int status = response != null ? response.code() : -1;
      client.listeners().attemptEnded(op.info, attempt, status, failure, decision, duration);
      if (response != null) {
        if (op.keySent && status == 409 && decision.isRetryable()) {
          client.listeners().inProgress(op.info, attempt);
        }
        String replayed = response.header(client.replayHeader());
        if (replayed != null && replayed.trim().equalsIgnoreCase("true")) {
          client.listeners().replayDetected(op.info, attempt);
        }
      }
      if (log.isDebugEnabled()) {
        log.debug("{} {} key={}… attempt {}/{} ({}): {} -> {} in {} ms", request.method(),
            request.url().host(), op.info.shortKey(), attempt, client.retryPolicy().maxAttempts(),
            attempt == 1 ? "first" : "retry", status > 0 ? "status " + status : failure.toString(),
            decision, duration.toMillis());
      }
      return new AttemptResult(response, failure, decision, state);
    } catch (RuntimeException | Error e) {
      closeQuietly(response);
      throw e;
    } finally {
      if (!recorded) {
        // Canceled, interrupted, or a bug in a classifier or interceptor: release the probe so that
        // a half-open breaker never stays stuck.
        releaseUnrecorded(breaker);
      }
    }
  }

  /**
   * The classifier's decision is the single source of truth for the breaker: retryable and
   * outcome-unknown attempts are failures; successes and permanent answers (the server is healthy)
   * are successes; a permanent exception is a failure.
   */
  private static void record(CircuitBreaker breaker, long startNanos, Decision decision,
      Response response, IOException failure) {
    if (breaker == null) {
      return;
    }
    long nanos = System.nanoTime() - startNanos;
    boolean healthy = decision.kind() == Decision.Kind.SUCCESS
        || (decision.kind() == Decision.Kind.FAIL && response != null);
    if (healthy) {
      breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
    } else {
      breaker.onError(nanos, TimeUnit.NANOSECONDS,
          failure != null ? failure : new RetryableStatus(response.code(), decision.reason()));
    }
  }

  private static void recordFailure(CircuitBreaker breaker, long startNanos, IOException failure) {
    if (breaker != null) {
      breaker.onError(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS,
          failure != null ? failure : new RetryableStatus(-1, "deadline"));
    }
  }

  private static void releaseUnrecorded(CircuitBreaker breaker) {
    if (breaker != null) {
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

  private static void ended(OperationContext op, Response response, IOException failure,
      String reason) {
    OperationResult.Outcome outcome = outcomeOf(op, response, failure);
    Duration elapsed = Duration.ofNanos(op.elapsedNanos());
    OperationResult result = new OperationResult(outcome, op.attempts(), op.networkRequests(),
        elapsed, response != null ? response.code() : -1, failure, reason);
    if (failure instanceof OutcomeUnknownException || failure instanceof DeadlineExceededException) {
      log.warn("{} gave up: {}", op.info, result);
    } else if (failure != null || (outcome == OperationResult.Outcome.FAILED_RESPONSE && op.lastRetryable)) {
      log.info("{} gave up: {}", op.info, result);
    } else if (log.isDebugEnabled()) {
      log.debug("{} ended: {}", op.info, result);
    }
    op.client.listeners().operationEnded(op.info, result);
  }

  private static OperationResult.Outcome outcomeOf(OperationContext op, Response response,
      IOException failure) {
    if (response != null) {
      return op.lastSuccess ? OperationResult.Outcome.SUCCESS : OperationResult.Outcome.FAILED_RESPONSE;
    }
    if (failure instanceof OutcomeUnknownException) {
      return OperationResult.Outcome.OUTCOME_UNKNOWN;
    }
    if (failure instanceof RetriesExhaustedException) {
      return OperationResult.Outcome.RETRIES_EXHAUSTED;
    }
    if (failure instanceof DeadlineExceededException) {
      return OperationResult.Outcome.DEADLINE_EXCEEDED;
    }
    if (failure instanceof RetryBudgetExhaustedException) {
      return OperationResult.Outcome.BUDGET_EXHAUSTED;
    }
    if (failure instanceof CircuitBreakerOpenException) {
      return OperationResult.Outcome.CIRCUIT_OPEN;
    }
    if (failure instanceof BulkheadFullException) {
      return OperationResult.Outcome.BULKHEAD_FULL;
    }
    if (failure instanceof OperationInterruptedException) {
      return OperationResult.Outcome.INTERRUPTED;
    }
    return OperationResult.Outcome.FAILED;
  }

  /** Ends a retryable operation that may not retry: returns the last response or throws. */
  private static Response giveUp(OperationContext op, int attempt, Decision decision, String why,
      String message, Response response, IOException failure, AttemptState state)
      throws IOException {
    op.lastReason = why;
    if (response != null) {
      return response;
    }
    if (state.mayHaveReachedServer()) {
      throw outcomeUnknown(op, attempt, why, message + "; last: " + decision, null, failure);
    }
    throw new RetriesExhaustedException(message + "; last: " + decision, op.key, op.keySent,
        attempt, why, failure);
  }

  private static OutcomeUnknownException outcomeUnknown(OperationContext op, int attempt,
      String reason, String message, Response response, IOException failure) {
    int status = response == null ? -1 : response.code();
    return new OutcomeUnknownException(
        "outcome unknown" + (status > 0 ? " (status " + status + ")" : "") + ": " + message,
        op.key, op.keySent, attempt, reason, status, failure);
  }

  private static DeadlineExceededException deadlineExceeded(
      OperationContext op, String message, IOException cause) {
    return new DeadlineExceededException(
        message + " (deadline " + TimeUnit.NANOSECONDS.toMillis(op.deadlineDurationNanos) + " ms)",
        op.key, op.keySent, op.attempts(), "deadline", cause);
  }

  private static OperationInterruptedException interrupted(OperationContext op, IOException cause) {
    return new OperationInterruptedException(op.key, op.keySent, op.attempts(), cause);
  }

  private static IOException lastStatusNote(int lastStatus) {
    return lastStatus > 0 ? new RetryableStatus(lastStatus, "previous-attempt") : null;
  }

  /** A duration in nanoseconds, saturating at Long.MAX_VALUE instead of overflowing. */
  private static long saturatedNanos(Duration d) {
    return d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : d.toNanos();
  }

  /** Shrinks the attempt's timeouts so that no attempt outlives the deadline. */
  private static Chain withTimeouts(Chain chain, long remainingNanos, RetryPolicy policy) {
    long cap = remainingNanos;
    if (policy.attemptTimeout().isPresent()) {
      cap = Math.min(cap, policy.attemptTimeout().get().toNanos());
    }
    int capMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(cap)));
    return chain
        .withConnectTimeout(shrink(chain.connectTimeoutMillis(), capMillis), TimeUnit.MILLISECONDS)
        .withReadTimeout(shrink(chain.readTimeoutMillis(), capMillis), TimeUnit.MILLISECONDS)
        .withWriteTimeout(shrink(chain.writeTimeoutMillis(), capMillis), TimeUnit.MILLISECONDS);
  }

  /** OkHttp's 0 means "no timeout". */
  private static int shrink(int currentMillis, int capMillis) {
    return currentMillis == 0 ? capMillis : Math.min(currentMillis, capMillis);
  }

  static void closeQuietly(Response response) {
    if (response != null) {
      response.close();
    }
  }

  /** What one attempt produced. */
  private static final class AttemptResult {
    final Response response;
    final IOException failure;
    final Decision decision;
    final AttemptState state;

    AttemptResult(Response response, IOException failure, Decision decision, AttemptState state) {
      this.response = response;
      this.failure = failure;
      this.decision = decision;
      this.state = state;
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
