package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.Operation;
import java.time.Duration;
import okhttp3.Response;

/**
 * What a feature above the retry loop does next ({@link Steps}): run the owning operation's own
 * attempts, send a request as a new operation of its own, wait, or end with a response. A failure
 * is not a step: the feature throws it. A {@link Run} carries each step out, on the caller's
 * thread or without holding one. Not API.
 */
public sealed interface Step {
  /** Runs the owning operation's own attempts (the submit, the first try), once. */
  Step ATTEMPTS = new Attempts();

  /** The owning operation's own attempts. */
  record Attempts() implements Step {}

  /**
   * Runs {@code operation} (a poll, a query, a re-send): made by the feature, not yet run; the run
   * cancels it when the run is cancelled.
   *
   * @param operation the operation to run
   */
  record Send(Operation operation) implements Step {}

  /**
   * Waits {@code delay}: the client's {@code TimeSource} on a blocking run, the client's scheduler
   * on a non-blocking one; a cancel cuts it short.
   *
   * @param delay how long, 0 or more
   */
  record Wait(Duration delay) implements Step {}

  /**
   * Ends the run with {@code response}, which goes to the caller (closed instead when the run was
   * cancelled first).
   *
   * @param response the final response
   */
  record Done(Response response) implements Step {}
}
