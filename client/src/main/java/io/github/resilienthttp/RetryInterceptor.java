package io.github.resilienthttp;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
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
 * <p>Each attempt runs with OkHttp's {@code retryOnConnectionFailure} off: OkHttp would otherwise
 * silently re-send a request after a failed pooled connection (POST included) and repeat a 408, so
 * one SDK attempt could be several server requests. The SDK makes those decisions itself, with the
 * classifier, the attempt limit and the deadline. {@link NetworkAttemptTracker} counts what really
 * went on the wire. Not API.
 */
final class RetryInterceptor implements Interceptor {
  private static final Logger log = LoggerFactory.getLogger(RetryInterceptor.class);
  private static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    OperationContext op = request.tag(OperationContext.class);
    if (op == null) {
      return chain.proceed(request);
    }
    ResilientHttpClient client = op.client;
    RetryPolicy policy = client.retryPolicy();
    RequestBody body = request.body();
    boolean oneShot = body != null && body.isOneShot();
    Chain noSilentRetries = chain.withRetryOnConnectionFailure(false);
    IOException lastFailure = null;

    while (true) {
      if (Thread.currentThread().isInterrupted()) {
        throw interrupted(op, lastFailure);
      }
      long remaining = op.remainingNanos();
      if (remaining < MIN_ATTEMPT_NANOS) {
        throw deadlineExceeded(op, "deadline passed before the next attempt", lastFailure);
      }
      int attempt = op.startAttempt();
      AttemptState state = new AttemptState(op);
      Request attemptRequest = request.newBuilder().tag(AttemptState.class, state).build();
      Chain attemptChain = withTimeouts(noSilentRetries, remaining, policy);
      long attemptStart = client.timeSource().nanoTime();

      Response response = null;
      IOException failure = null;
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
          throw deadlineExceeded(op, "deadline passed during attempt " + attempt, failure);
        }
        throw new ResilientHttpException("operation canceled", op.key, op.keySent, attempt,
            "canceled", failure);
      }
      if (failure != null && op.remainingNanos() <= 0) {
        throw deadlineExceeded(op, "deadline passed during attempt " + attempt, failure);
      }

      AttemptOutcome outcome = new AttemptOutcome(request, response, failure, attempt,
          state.mayHaveReachedServer(), op.idempotent, op.key, op.keySent, client.timeSource().now());
      Decision decision = classify(client.classifier(), outcome);
      if (log.isDebugEnabled()) {
        log.debug("{} {} key={}… attempt {}/{}: {} -> {} in {} ms", request.method(),
            request.url().host(), IdempotencyKeyPolicy.shorten(op.key), attempt,
            policy.maxAttempts(), response != null ? "status " + response.code() : failure.toString(),
            decision, TimeUnit.NANOSECONDS.toMillis(client.timeSource().nanoTime() - attemptStart));
      }

      if (decision.kind() == Decision.Kind.SUCCESS) {
        return response;
      }
      boolean retryable = decision.kind() == Decision.Kind.RETRY
          || (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT && op.idempotent);
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

      // Retryable: find out whether another attempt is allowed, and when.
      if (oneShot && state.mayHaveReachedServer()) {
        return giveUp(op, attempt, decision, "one-shot-body",
            "the request body is one-shot and cannot be sent again", response, failure, state);
      }
      if (attempt >= policy.maxAttempts()) {
        return giveUp(op, attempt, decision, "attempts-exhausted",
            "all " + attempt + " attempts failed", response, failure, state);
      }
      Duration delay = policy.backoff().delay(attempt, client.random());
      if (decision.retryAfter().isPresent()) {
        Duration retryAfter = decision.retryAfter().get();
        if (retryAfter.compareTo(policy.maxRetryAfter()) > 0) {
          return giveUp(op, attempt, decision, "retry-after-too-long",
              "the server asked to wait " + retryAfter + ", more than maxRetryAfter "
                  + policy.maxRetryAfter(), response, failure, state);
        }
        if (retryAfter.compareTo(delay) > 0) {
          delay = retryAfter;
        }
      }
      if (delay.toNanos() > op.remainingNanos() - MIN_ATTEMPT_NANOS) {
        if (response != null) {
          return response;
        }
        throw deadlineExceeded(op, "the next retry could not start before the deadline (wait "
            + delay.toMillis() + " ms)", failure);
      }

      closeQuietly(response);
      lastFailure = failure;
      try {
        client.timeSource().sleep(delay);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw interrupted(op, failure);
      }
    }
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

  /** Ends a retryable operation that may not retry: returns the last response or throws. */
  private static Response giveUp(OperationContext op, int attempt, Decision decision, String why,
      String message, Response response, IOException failure, AttemptState state)
      throws IOException {
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

  private static InterruptedIOException interrupted(OperationContext op, IOException cause) {
    return new OperationInterruptedException(op.key, op.keySent, op.attempts(), cause);
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
}
