package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;

/**
 * What an operation is, fixed when it starts: its method and host, whether it sends a key and may
 * be repeated, whether it opted out, and its deadline in the client's clock and in real time. The
 * immutable half of an operation, implemented by its {@link Execution} (so that it costs no object
 * of its own); what changes while it runs (attempts, cancel, the watchdog's links) is the
 * execution's, and each attempt's own state is its {@link Attempt}'s. Not API.
 */
public interface OperationSpec {
  /** {@return the request's method} */
  String method();

  /** {@return the request's host} */
  String host();

  /** {@return whether the operation sends its idempotency key} */
  boolean keySent();

  /** {@return whether it may be repeated safely (safe method, PUT, DELETE, or a key)} */
  boolean idempotent();

  /** {@return whether a plain call opted out of the SDK ({@code OperationOptions.passThrough})} */
  boolean passThrough();

  /** {@return when it started, in the client's {@code TimeSource}, in nanoseconds} */
  long startNanos();

  /** {@return its total deadline, in nanoseconds} */
  long deadlineDurationNanos();

  /** {@return when the deadline passes, in the client's {@code TimeSource}} */
  long deadlineNanos();

  /**
   * {@return when the deadline passes in {@link System#nanoTime()}}: the deadline's backstop runs
   * on real time, whatever the client's {@code TimeSource}
   */
  long realDeadlineNanos();

  /** {@return the retry policy that applies (the operation's own, or the client's)} */
  RetryPolicy retryPolicy();

  /** {@return the classifier that applies (the operation's own, or the client's)} */
  ResponseClassifier classifier();
}
