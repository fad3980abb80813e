package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;

/**
 * What an operation is, fixed when it starts: its method and host, whether it sends a key and may
 * be repeated, whether it opted out, and its deadline in the client's clock and in real time. The
 * immutable half of an operation; what changes while it runs (attempts, cancel, the watchdog's
 * links) is {@link Execution}'s, and each attempt's own state is its {@link Attempt}'s.
 * Not API.
 *
 * @param method the request's method
 * @param host the request's host
 * @param keySent whether the operation sends its idempotency key
 * @param idempotent whether it may be repeated safely (safe method, PUT, DELETE, or a key)
 * @param passThrough whether a plain call opted out of the SDK ({@code OperationOptions.passThrough})
 * @param startNanos when it started, in the client's {@code TimeSource}
 * @param deadlineDurationNanos its total deadline
 * @param deadlineNanos when the deadline passes, in the client's {@code TimeSource}
 * @param realDeadlineNanos when the deadline passes in {@link System#nanoTime()}: the deadline's
 *     backstop runs on real time, whatever the client's {@code TimeSource}
 */
public record OperationSpec(String method, String host, boolean keySent, boolean idempotent,
    boolean passThrough, long startNanos, long deadlineDurationNanos, long deadlineNanos,
    long realDeadlineNanos, RetryPolicy retryPolicy, ResponseClassifier classifier) {}
