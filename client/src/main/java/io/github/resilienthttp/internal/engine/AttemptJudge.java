package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.internal.classify.AnswerInContext;
import io.github.resilienthttp.internal.classify.DefaultResponseClassifier;
import java.io.IOException;
import java.time.Duration;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one attempt's answer means, in its operation's context: the run's classifier (guarded: a
 * {@code null} decision is a bug named at once, {@code DEFER} goes to the defaults, a "success"
 * without a response is impossible), then {@link AnswerInContext} (replays, a 409 about an earlier
 * attempt, key mismatches in other words); then what the breaker hears ({@link #record}) and what
 * listeners and the log are told ({@link #report}).
 *
 * <p>Stateless (the attempt's facts are arguments), so judging allocates nothing beyond the
 * classifier's input. Called by {@link RetryLoop} only. Not API.
 */
final class AttemptJudge {
  private static final Logger log = LoggerFactory.getLogger(RetryLoop.class);

  private AttemptJudge() {}

  /**
   * The decision for an attempt that ended with {@code response} or {@code failure}.
   *
   * @param earlierMayHaveBeenProcessed whether an earlier attempt may have reached the server
   */
  static Decision decision(Execution op, Request request, Attempt attempt, Response response,
      IOException failure, boolean earlierMayHaveBeenProcessed) {
    ClientRuntime client = op.runtime();
    if (response != null && op.classifier() == DefaultResponseClassifier.INSTANCE) {
      Decision success = DefaultResponseClassifier.success(response.code());
      if (success != null) {
        return AnswerInContext.apply(success, response, op.keySent(), attempt.number(),
            earlierMayHaveBeenProcessed, client.replayHeader());
      }
    }
    AttemptOutcome outcome = AttemptOutcome.of(request, response, failure, attempt.number(),
        attempt.mayHaveReachedServer(), op.idempotent(), op.keySent(), op,
        client.timeSource());
    return AnswerInContext.apply(classify(op.classifier(), outcome), response,
        op.keySent(), attempt.number(), earlierMayHaveBeenProcessed, client.replayHeader());
  }

  /** The classifier's decision, guarded: never {@code null}, never {@code DEFER}. */
  static Decision classify(ResponseClassifier classifier, AttemptOutcome outcome) {
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

  /**
   * What the breaker hears: any answer below 500 is a healthy server (2xx, 3xx, and the client-side
   * 4xx answers, including 409 "in progress", 429 rate limiting and 408, which are retried but say
   * nothing about the server's health), as is any other answer the classifier calls permanent; 5xx
   * answers the classifier retries, and exceptions, are failures. An attempt that failed in the
   * client's own code before anything was written (a user network interceptor) is not recorded:
   * the permission is released unrecorded.
   */
  static void record(Attempt attempt, Decision decision, Response response,
      IOException failure) {
    if (response == null && attempt.failedInClientBeforeWire()) {
      return; // releasePermits() gives the permission back unrecorded
    }
    boolean healthy = decision.kind() == Decision.Kind.SUCCESS
        || (response != null && (decision.kind() == Decision.Kind.FAIL || response.code() < 500));
    attempt.record(healthy, healthy ? null
        : failure != null ? failure : new RetryLoop.RetryableStatus(response.code(),
            decision.reason()));
  }

  /** The breaker hears of an attempt that the deadline cut. */
  static void recordDeadline(AttemptPermits permits, IOException failure) {
    permits.record(false, failure != null ? failure : new RetryLoop.RetryableStatus(-1, "deadline"));
  }

  /**
   * Tells listeners (attempt ended, in progress, replay) and the DEBUG log about the attempt.
   *
   * @param attemptStart the attempt's start on the client's clock, in nanoseconds
   */
  /** {@return whether attempts are logged (debug)}: with no listener either, none is reported */
  static boolean reports() {
    return log.isDebugEnabled();
  }

  static void report(Execution op, Request request, Attempt attempt, Decision decision,
      Response response, IOException failure) {
    ClientRuntime client = op.runtime();
    if (client.listeners().isEmpty() && !log.isDebugEnabled()) {
      return;
    }
    int number = attempt.number();
    Duration duration = Duration.ofNanos(client.timeSource().nanoTime() - attempt.startNanos());
    int status = response != null ? response.code() : -1;
    client.listeners().attemptEnded(op, number, attempt.kind(), status, failure, decision,
        duration);
    if (response != null) {
      if (op.keySent() && status == 409 && decision.isRetryable()) {
        client.listeners().inProgress(op, number);
      }
      String replayed = response.header(client.replayHeader());
      if (replayed != null && replayed.trim().equalsIgnoreCase("true")) {
        client.listeners().replayDetected(op, number);
      }
    }
    if (log.isDebugEnabled()) {
      log.debug("{} {} key={}… attempt {}/{} ({}): {} -> {} in {} ms", request.method(),
          request.url().host(), op.info().shortKey(), number,
          op.retryPolicy().maxAttempts(), number == 1 ? "first" : "retry",
          status > 0 ? "status " + status : String.valueOf(failure), decision, duration.toMillis());
    }
  }
}
